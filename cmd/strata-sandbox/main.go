// Command strata-sandbox is the sandbox's launcher on its own: what strata
// starts in place of Terraform when it lies next to the strata binary
// (sandbox.Launcher). It links only the sandbox package, whose init does
// all the work (sandbox/launch.go), so each of the two re-execs a Terraform
// command goes through starts in milliseconds instead of running the init
// of every library the server links (about a tenth of a second, 100 MB).
package main

import (
	"fmt"
	"os"

	_ "strata.dev/strata/sandbox" // its init is the launcher
)

// main runs only when the process was started without a Spec: by hand.
func main() {
	fmt.Fprintln(os.Stderr, "strata-sandbox: the Terraform sandbox's launcher; strata starts it with a Spec, it does nothing by hand")
	os.Exit(2)
}
