package coursetest

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/gpt"
)

// TestTrainAGPT runs notebook 10 in its short setting (ATTNBOOK_SHORT=1: a 2-block model, 30 steps)
// with the checkpoints in a temporary folder, then again to see it load the checkpoint instead of
// training.
func TestTrainAGPT(t *testing.T) {
	if _, _, err := gpt.LoadCorpus(nbrun.Root(t)); err != nil {
		nbrun.Missing(t, err.Error())
	}
	ckpts := t.TempDir()
	t.Setenv("ATTNBOOK_SHORT", "1")
	t.Setenv("ATTNBOOK_GPT_CHECKPOINTS", ckpts)
	r := nbrun.Execute(t, "notebooks/10_train_a_gpt.ipynb")
	for _, c := range r.Code() {
		if !c.Executed {
			t.Errorf("cell %d did not run", c.Index)
		}
		if len(c.Errors) > 0 || strings.Contains(c.Stderr, "panic") {
			t.Errorf("cell %d failed: %v %s", c.Index, c.Errors, c.Stderr)
		}
	}
	number := func(c nbrun.Cell, re string) float64 {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(c.Stdout)
		if m == nil {
			t.Fatalf("cell %d: no %q in its output:\n%s", c.Index, re, c.Stdout)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}

	if c := r.Find(t, "vocabulary: %d characters"); !strings.Contains(c.Stdout, "vocabulary: 65 characters") {
		t.Errorf("data cell printed %q", c.Stdout)
	}
	before := r.Find(t, "loss before training")
	if ln := number(before, `ln 65 = ([0-9.]+)`); math.Abs(ln-math.Log(65)) > 1e-4 {
		t.Errorf("ln 65 printed as %g", ln)
	}
	val0 := number(before, `validation ([0-9.]+)`)
	if math.Abs(val0-math.Log(65)) > 0.1 {
		t.Errorf("validation loss before training %g, want ≈ ln 65", val0)
	}
	if gib := r.Find(t, "Temperature: 1, Seed: 1"); len(strings.TrimSpace(gib.Stdout)) < 150 {
		t.Errorf("untrained sample too short: %q", gib.Stdout)
	}
	if heads := r.Find(t, "showLayers(m, tok); err != nil"); len(heads.HTML)+len(heads.SVG) < 2 {
		t.Errorf("heads before training: %d HTML and %d SVG outputs, want one per block (2)", len(heads.HTML), len(heads.SVG))
	}
	train := r.Find(t, "trainer.Run(gpt.RunOptions")
	if !strings.Contains(train.Stdout, "trained 30 steps") {
		t.Errorf("training cell printed %q", train.Stdout)
	}
	if len(train.HTML)+len(train.SVG) == 0 {
		t.Error("training cell displayed no loss plot")
	}
	dir := filepath.Join(ckpts, "shakespeare-L2-H4-C64-T32-steps30")
	if !gpt.HasCheckpoint(dir) {
		t.Fatalf("no checkpoint in %s", dir)
	}
	after := r.Find(t, "after %d steps: train loss")
	val1 := number(after, `validation loss ([0-9.]+)`)
	if !(val1 < val0-0.5) {
		t.Errorf("validation loss %g after 30 steps, want below %g (before training) by 0.5", val1, val0)
	}
	if text := r.Find(t, "Temperature: 0.8, TopK: 10"); len(text.Stdout) < 400 {
		t.Errorf("generated text too short: %q", text.Stdout)
	}
	stats := r.Find(t, "gpt.FormatHeadStats")
	if !strings.Contains(stats.Stdout, "L1 H3") || len(stats.HTML)+len(stats.SVG) < 2 {
		t.Errorf("heads after training: table %q, %d pictures", stats.Stdout, len(stats.HTML)+len(stats.SVG))
	}
	summary := r.Find(t, "the right character's probability")
	// The summary measures the whole validation split; the after-training cell's estimate samples
	// 2 batches of it.
	if got := number(summary, `whole split\): [0-9.]+ before training \(ln 65\), ([0-9.]+) after 30 steps`); math.Abs(got-val1) > 0.2 {
		t.Errorf("summary says %g for the whole validation split, the after-training estimate %g", got, val1)
	}

	// A second run loads the checkpoint instead of training.
	r2 := nbrun.Execute(t, "notebooks/10_train_a_gpt.ipynb")
	if c := r2.Find(t, "trainer.Run(gpt.RunOptions"); !strings.Contains(c.Stdout, "training skipped") {
		t.Errorf("second run's training cell printed %q", c.Stdout)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Error(err)
	}
}
