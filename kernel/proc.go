package main

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// relay says what to do when this process gets SIGINT or SIGTERM while a child runs.
type relay struct {
	// OwnGroup starts the child in its own process group, so a terminal's Ctrl-C reaches only this
	// process, which relays it (to the whole group). Without it the child shares the terminal's
	// Ctrl-C and this process only waits for it (and relays SIGTERM).
	OwnGroup bool
	// First is the signal sent on the first SIGINT/SIGTERM (nil: the one received).
	First os.Signal
	// KillAfter, when set, SIGKILLs the child that long after the first signal; a second signal
	// kills at once.
	KillAfter time.Duration
}

// runChild starts cmd, relays signals as r says, and waits for it. relayed reports whether this
// process got SIGINT or SIGTERM meanwhile.
func runChild(cmd *exec.Cmd, r relay) (relayed bool, err error) {
	if r.OwnGroup {
		setOwnGroup(cmd)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var kill <-chan time.Time
	got := 0
	for {
		select {
		case err := <-done:
			return got > 0, err
		case s := <-sigs:
			got++
			switch {
			case got > 1 && r.KillAfter > 0:
				signalChild(cmd, r.OwnGroup, syscall.SIGKILL)
			case !r.OwnGroup && s == os.Interrupt:
				// The terminal sent Ctrl-C to the child too: just wait for it.
			default:
				if r.First != nil {
					s = r.First
				}
				signalChild(cmd, r.OwnGroup, s)
				if r.KillAfter > 0 {
					kill = time.After(r.KillAfter)
				}
			}
		case <-kill:
			signalChild(cmd, r.OwnGroup, syscall.SIGKILL)
		}
	}
}
