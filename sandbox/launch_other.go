//go:build !linux

package sandbox

import "errors"

var errNotLinux = errors.New("the sandbox exists only on Linux: set terraform.sandbox: off")

func supervise(Spec, string) (int, error) { return 0, errNotLinux }

func confineAndExec(string) error { return errNotLinux }
