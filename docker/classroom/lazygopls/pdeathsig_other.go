//go:build !linux

package main

import "os/exec"

// setParentDeathSignal: elsewhere the real gopls exits when its standard input closes.
func setParentDeathSignal(cmd *exec.Cmd) {}
