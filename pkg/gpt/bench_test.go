package gpt

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/attnbook/attnbook/pkg/torchrand"
)

// benchTrainer is the nanoGPT CPU recipe's model and schedule on data.
func benchTrainer(tb testing.TB, fused bool, data []int32) *Trainer {
	cfg, tc := NanoGPTCPU(65)
	tc.EvalIters, tc.EvalInterval = 1, 0 // Run's closing estimate: 2 forward passes
	m, err := New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		tb.Fatal(err)
	}
	m.Fused = fused
	tr, err := m.NewTrainer(tc, data, data)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

// BenchmarkTrainStep times one training step of the nanoGPT CPU recipe (B=12, T=64, 4 layers of
// 4 heads, C=128): forward, backward, clipping and AdamW. It reports tokens/s.
//
//	GOEXPERIMENT=simd go test ./pkg/gpt/ -run '^$' -bench TrainStep -benchtime 20x
func BenchmarkTrainStep(b *testing.B) {
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprintf("fused=%v", fused), func(b *testing.B) {
			tr := benchTrainer(b, fused, syntheticData(100_000))
			if _, err := tr.Run(RunOptions{Steps: 2}); err != nil { // compile
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			if _, err := tr.Run(RunOptions{Steps: b.N}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N*12*64)/time.Since(start).Seconds(), "tokens/s")
		})
	}
}

// TestRecipe runs nanoGPT's CPU recipe on Tiny Shakespeare (2000 steps, ~minutes) and prints one
// JSON line: validation loss (200 batches), wall time, tokens/s, peak RSS. It runs only with
// ATTNBOOK_GPT_RECIPE=<steps> (e.g. 2000); testdata/reference.py bench is its PyTorch twin.
//
//	ATTNBOOK_GPT_RECIPE=2000 GOEXPERIMENT=simd go test ./pkg/gpt/ -run TestRecipe -v -timeout 60m
func TestRecipe(t *testing.T) {
	steps, _ := strconv.Atoi(os.Getenv("ATTNBOOK_GPT_RECIPE"))
	if steps <= 0 {
		t.Skip("set ATTNBOOK_GPT_RECIPE=2000 to run nanoGPT's CPU recipe")
	}
	text, _, err := LoadCorpus("../..")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := NewTokenizer(text)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	trainIDs, valIDs := SplitTrainVal(ids)
	cfg, tc := NanoGPTCPU(tok.VocabSize())
	tc.MaxIters, tc.LRDecayIters = steps, steps
	m, err := New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	m.Fused = os.Getenv("ATTNBOOK_GPT_FUSED") == "1"
	tr, err := m.NewTrainer(tc, trainIDs, valIDs)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := tr.Run(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start).Seconds()
	last := tr.Evals[len(tr.Evals)-1]
	full, err := m.SplitLoss(valIDs)
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := NewBatches("val", valIDs, cfg.BlockSize, tc.BatchSize, tc.BatchSeed+1000, 200)
	if err != nil {
		t.Fatal(err)
	}
	val, err := tr.eval(fixed) // not GoMLX's Trainer.Eval: see Trainer.eval
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	out, _ := json.Marshal(map[string]any{"impl": "go", "fused": m.Fused, "steps": res.Steps,
		"train_seconds": res.Seconds, "wall_seconds_with_final_eval": wall, "tokens_per_second": res.TokensPerSec,
		"final_train_loss": res.LastLoss, "nanogpt_val_estimate": last.Validate, "nanogpt_train_estimate": last.Train,
		"val_loss": val, "val_loss_full": full, "estimates": tr.Evals,
		"peak_rss_mib": float64(ru.Maxrss) / 1024})
	fmt.Println(string(out))
}
