package testprovider

import (
	"context"
	"strings"
	"testing"
)

// world_exec's program sees the provider's environment and env, its exit
// code is reported, and its output is bounded: a program that prints more
// than MaxExecOutput fails the read.
func TestRunProgram(t *testing.T) {
	ctx := context.Background()
	t.Setenv("FROM_TERRAFORM", "inherited")
	ran, err := RunProgram(ctx, []string{"sh", "-c", `echo "$FROM_TERRAFORM $ADDED"; echo oops >&2; exit 3`}, map[string]string{"ADDED": "added"})
	if err != nil || ran != (Ran{Stdout: "inherited added\n", Stderr: "oops\n", ExitCode: 3}) {
		t.Fatalf("ran = %+v, %v", ran, err)
	}
	if _, err := RunProgram(ctx, []string{"sh", "-c", "head -c 1048577 /dev/zero"}, nil); err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") {
		t.Fatalf("a program printing 1 MiB + 1: err = %v", err)
	}
	if ran, err := RunProgram(ctx, []string{"sh", "-c", "head -c 1048576 /dev/zero"}, nil); err != nil || len(ran.Stdout) != 1<<20 {
		t.Fatalf("a program printing 1 MiB: %d bytes, %v", len(ran.Stdout), err)
	}
	if _, err := RunProgram(ctx, nil, nil); err == nil {
		t.Fatal("an empty program ran")
	}
}
