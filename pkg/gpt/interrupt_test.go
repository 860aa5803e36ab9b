package gpt

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt: SIGINT during Run (the notebook's interrupt button) stops after the step under
// way, keeps and saves the weights, and reports ErrInterrupted; the process lives on.
func TestInterrupt(t *testing.T) {
	m, tr := tinyModel(t, 0)
	dir := filepath.Join(t.TempDir(), "ckpt")
	type result struct {
		res RunResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := tr.Run(RunOptions{Interruptible: true, CheckpointDir: dir})
		done <- result{res, err}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for tr.stepT.Load() < 2 { // the handler is installed before the first step
		if time.Now().After(deadline) {
			t.Fatal("no training step within 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if !errors.Is(r.err, ErrInterrupted) {
		t.Fatalf("Run error %v, want ErrInterrupted", r.err)
	}
	if !r.res.Interrupted || r.res.Steps < 2 || r.res.Steps >= 60 {
		t.Errorf("result %+v: want interrupted after 2 to 59 of 60 steps", r.res)
	}
	if r.res.Saved != dir || !HasCheckpoint(dir) {
		t.Fatalf("no checkpoint saved in %s (result %+v)", dir, r.res)
	}
	// Running again resumes there and trains to the end.
	train, val := SplitTrainVal(syntheticData(6000))
	tr2, err := Resume(dir, m.Config(), tr.tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	if tr2.Step() != r.res.TotalSteps || len(tr2.Losses) != r.res.TotalSteps {
		t.Errorf("resumed at step %d with %d losses, the run stopped at %d", tr2.Step(), len(tr2.Losses), r.res.TotalSteps)
	}
	res, err := tr2.Run(RunOptions{CheckpointDir: dir})
	if err != nil || res.TotalSteps != 60 || len(tr2.Losses) != 60 || tr2.Evals[len(tr2.Evals)-1].Step != 60 {
		t.Errorf("resumed run: %+v, %v; %d losses", res, err, len(tr2.Losses))
	}
}
