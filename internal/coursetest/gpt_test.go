package coursetest

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/gpt"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestTrainAGPT runs notebook 10 in its short setting (ATTNBOOK_SHORT=1: a 2-block model, 30 steps)
// with the checkpoints in a temporary folder; then it replaces the checkpoint by one of the same
// run stopped at step 12 (as an interrupt leaves it) and runs the notebook again, which must
// resume at step 12, train the 18 steps left and end with the first run's weights, bit for bit.
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
	CheckSavedSizes(t, r)                     // issue 29: the executed notebook stays small (heads drawn as images)
	CheckOutputWidth(t, r, "tok.Decode(out)") // the samples keep the model's lines (a short run's are long)
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
	checkTrainingDisplay(t, train, "step 30/30")
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
	// The cache: the same text "in a fraction of the time" (7-13x here, on a loaded 2-core machine).
	kv := r.Find(t, "KVCache: cache}")
	if !strings.Contains(kv.Stdout, "the same text: true") {
		t.Errorf("generation with and without the key-value cache: %q, want the same text", kv.Stdout)
	}
	without, with := number(kv, `KVCache: false +\d+ characters in +([0-9.]+) ms`), number(kv, `KVCache: true +\d+ characters in +([0-9.]+) ms`)
	if !(with < without/2) {
		t.Errorf("a block with the cache took %g ms, without %g ms: want at most half", with, without)
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

	// An interrupted run: the same run's checkpoint at step 12. Running the notebook again resumes
	// it and ends where the first run ended.
	full, err := gpt.Load(dir, gpt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := full.StateDict()
	stopAt12(t, dir)
	r2 := nbrun.Execute(t, "notebooks/10_train_a_gpt.ipynb")
	resumed := r2.Find(t, "trainer.Run(gpt.RunOptions")
	if !strings.Contains(resumed.Stdout, "trained 18 steps") {
		t.Errorf("second run's training cell printed %q", resumed.Stdout)
	}
	// "resumed at step 12 of 30" once: under the progress bar, not also as printed text.
	if strings.Contains(resumed.Stdout, "resumed at step") {
		t.Errorf("second run's training cell printed %q: the progress display already says where it resumed", resumed.Stdout)
	}
	checkTrainingDisplay(t, resumed, "resumed at step 12 of 30")
	again, err := gpt.Load(dir, gpt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := again.StateDict()
	for _, k := range full.ParamNames() {
		a, b := tensors.MustCopyFlatData[float32](got[k]), tensors.MustCopyFlatData[float32](want[k])
		if !slices.Equal(a, b) {
			t.Errorf("%s after resuming at step 12 differs from the uninterrupted run's", k)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Error(err)
	}
}

// checkTrainingDisplay checks the training cell's output: short text, and one HTML display (the
// progress, updated in place: its final state) that shows want, a full bar, and a loss plot whose
// train and validation lines are both drawn, in distinct colours.
func checkTrainingDisplay(t *testing.T, c nbrun.Cell, want string) {
	t.Helper()
	if n := len(c.Stdout) + len(c.Stderr); n > 2048 {
		t.Errorf("training cell printed %d characters of text, want at most 2 KB:\n%s", n, c.Stdout+c.Stderr)
	}
	if len(c.HTML) != 1 {
		t.Fatalf("training cell has %d HTML outputs, want 1 (the progress display, updated in place)", len(c.HTML))
	}
	html := c.HTML[0]
	for _, w := range []string{want, `aria-valuenow="30"`, `<g class="train"><polyline`, `<g class="validation"><polyline`} {
		if !strings.Contains(html, w) {
			t.Errorf("training display lacks %q:\n%s", w, html)
		}
	}
	colour := func(class string) string {
		m := regexp.MustCompile(`<g class="` + class + `"><polyline points="[^"]*" fill="none" stroke="([^"]+)"`).FindStringSubmatch(html)
		if m == nil {
			return ""
		}
		return m[1]
	}
	if tr, va := colour("train"), colour("validation"); tr == "" || tr == va {
		t.Errorf("train line colour %q, validation %q: want two distinct colours", tr, va)
	}
	if strings.Contains(c.Stdout, "\x1b[") {
		t.Error("training cell printed terminal escapes")
	}
}

// stopAt12 replaces the checkpoint in dir by the same short run (notebook 10's ATTNBOOK_SHORT
// settings) stopped at step 12, as an interrupt would have left it.
func stopAt12(t *testing.T, dir string) {
	t.Helper()
	text, _, err := gpt.LoadCorpus(nbrun.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gpt.NewTokenizer(text)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	trainIDs, valIDs := gpt.SplitTrainVal(ids)
	cfg, tc := gpt.Tiny(tok.VocabSize())
	tc.MaxIters, tc.LRDecayIters, tc.EvalInterval, tc.EvalIters = 30, 30, 10, 2 // notebook 10's settings(), short
	m, err := gpt.New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := m.NewTrainer(tc, trainIDs, valIDs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(gpt.RunOptions{Steps: 12, CheckpointDir: dir}); err != nil {
		t.Fatal(err)
	}
}
