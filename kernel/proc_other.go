//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func setOwnGroup(*exec.Cmd) {}

func signalChild(cmd *exec.Cmd, _ bool, s os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(s)
	}
}
