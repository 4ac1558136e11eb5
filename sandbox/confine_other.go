//go:build !linux

package sandbox

import "errors"

func kernelABI() int { return 0 }

func confine(Spec) error { return errors.New("Landlock exists only on Linux") }
