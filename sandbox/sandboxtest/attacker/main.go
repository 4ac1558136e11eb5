//go:build linux

// Command attacker is a pull request's program for the sandbox's tests:
// run by a provisioner, it tries each attack its arguments name and prints
// "attack -> result" for each (sandboxtest.Attack).
package main

import (
	"fmt"
	"os"

	"strata.dev/strata/sandbox/sandboxtest"
)

func main() {
	for _, a := range os.Args[1:] {
		fmt.Printf("%s -> %s\n", a, sandboxtest.Attack(a))
	}
}
