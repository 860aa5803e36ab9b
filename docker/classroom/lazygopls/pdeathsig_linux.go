package main

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal kills the real gopls when lazygopls dies (GoNB kills lazygopls, not its
// children, when a kernel stops).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
