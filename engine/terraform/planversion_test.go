package terraform

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	version "github.com/hashicorp/go-version"

	"strata.dev/strata/tooltest"
)

// A saved plan is applied by the binary of its engine and version; a newer
// binary added since does not take it over.
func TestPickForPlan(t *testing.T) {
	bins := []Binary{
		bin(KindTerraform, "1.5.7", "/opt/tf157"),
		bin(KindTerraform, "1.9.8", "/opt/tf198"),
		bin(KindTofu, "1.5.7", "/opt/tofu157"),
	}
	for _, tc := range []struct {
		name string
		kind Kind
		made string
		want string // path, or a part of the error
	}{
		{"the plan's version, not the highest", KindTerraform, "1.5.7", "/opt/tf157"},
		{"the plan's engine, though the other has the version", KindTofu, "1.5.7", "/opt/tofu157"},
		{"its version is gone", KindTerraform, "1.6.0",
			"the plan was made by terraform 1.6.0, which is no longer among the server's terraform binaries: 1.5.7 (/opt/tf157), 1.9.8 (/opt/tf198). Comment /plan to plan again."},
		{"its engine is gone", KindTofu, "1.10.6", "no longer among the server's tofu binaries: 1.5.7 (/opt/tofu157)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PickForPlan(bins, tc.kind, version.Must(version.NewVersion(tc.made)))
			if strings.HasPrefix(tc.want, "/") {
				if err != nil || got.Path != tc.want {
					t.Fatalf("PickForPlan = %v, %v; want %s", got, err, tc.want)
				}
				return
			}
			var verr *VersionError
			if !errors.As(err, &verr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PickForPlan = %v, %v; want a VersionError with %q", got, err, tc.want)
			}
		})
	}
	if _, err := PickForPlan(nil, KindTerraform, version.Must(version.NewVersion("1.5.7"))); err == nil || !strings.Contains(err.Error(), "terraform binaries: none.") {
		t.Errorf("no binaries: %v", err)
	}
}

// The version a real plan file records is the version of the binary that
// made it, on each engine, and ChooseForPlan finds that binary again.
func TestPlanVersionOfRealPlans(t *testing.T) {
	tf := terraformBin(t)
	tofu, err := FindTofu()
	if err == nil {
		_, err = os.Stat(tofu)
	}
	if err != nil {
		tooltest.Missing(t, "tofu ($"+TofuBinaryEnv+" or PATH)", err)
	}
	bins := []Binary{{Path: tf, Kind: KindTerraform}, {Path: tofu, Kind: KindTofu}}
	for _, b := range bins {
		t.Run(string(b.Kind), func(t *testing.T) {
			s := newScenario(t)
			s.bin = b.Path
			plan := s.plan(map[string]string{"main.tf": "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\n"})
			made, err := PlanVersion(plan.PlanFile)
			if err != nil {
				t.Fatal(err)
			}
			want, err := binaryVersion(context.Background(), b.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !made.Equal(want) || made.String() != plan.TerraformVersion {
				t.Errorf("plan file says %s; %s is %s and said %s", made, b.Path, want, plan.TerraformVersion)
			}
			got, err := ChooseForPlan(context.Background(), bins, b.Kind, plan.PlanFile)
			if err != nil || got.Path != b.Path {
				t.Errorf("ChooseForPlan = %v, %v; want %s", got, err, b.Path)
			}
		})
	}
	if _, err := PlanVersion([]byte("not a plan")); !errors.Is(err, ErrNoPlanVersion) {
		t.Errorf("PlanVersion of what is no plan: %v, want ErrNoPlanVersion", err)
	}
}
