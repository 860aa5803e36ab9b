//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

func setOwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// signalChild signals the child, or its whole process group when it has its own.
func signalChild(cmd *exec.Cmd, group bool, s os.Signal) {
	if cmd.Process == nil {
		return
	}
	if sig, ok := s.(syscall.Signal); ok && group {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		return
	}
	_ = cmd.Process.Signal(s)
}
