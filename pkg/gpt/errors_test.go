package gpt

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/argerr"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestBadInputs: every exported function of the package, given a bad argument, returns (or,
// from a graph builder, panics with) an error whose first line names the function, the argument,
// what was expected and what was given — before any graph is built. $DIR stands for the test's
// checkpoint folder, $DATA for its corpus folder.
func TestBadInputs(t *testing.T) {
	m, tr := tinyModel(t, 1)
	root := t.TempDir()
	ckpt := filepath.Join(root, "ckpt")
	if err := tr.Save(ckpt); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(root, "plain")
	if err := m.Save(plain); err != nil {
		t.Fatal(err)
	}
	// corrupt copies ckpt, replacing the file with suffix by data (nil: its first half).
	if err := os.WriteFile(filepath.Join(empty, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := func(suffix string, data []byte) string {
		dir, err := os.MkdirTemp(root, "corrupt")
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(ckpt)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(ckpt, e.Name()))
			if strings.HasSuffix(e.Name(), suffix) {
				if data == nil {
					data = b[:len(b)/2]
				}
				b = data
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	corpus := func(data string) {
		dir := t.TempDir()
		if data != "<none>" {
			if err := os.WriteFile(filepath.Join(dir, CorpusName), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("ATTNBOOK_DATA", dir)
	}
	cfg, tc := Tiny(65)
	data := syntheticData(6000)
	trainIDs, valIDs := SplitTrainVal(data)
	tok, err := NewTokenizer("hello world\n")
	if err != nil {
		t.Fatal(err)
	}
	ids := func(v ...int32) *tensors.Tensor { return tensors.FromFlatDataAndDimensions(v, 1, len(v)) }
	withCfg := func(f func(*Config)) Config { c := cfg; f(&c); return c }
	withTC := func(f func(*TrainConfig)) TrainConfig { c := tc; f(&c); return c }
	newWith := func(c Config) error { _, err := New(c, torchrand.New(0)); return err }
	trainWith := func(c TrainConfig) error { _, err := m.NewTrainer(c, trainIDs, valIDs); return err }
	var nilModel *Model
	var nilTrainer *Trainer
	badIDs := append([]int32{}, valIDs...)
	badIDs[7] = 70

	tests := []struct {
		name string
		err  func() error
		want string // the error's first line
	}{
		// Config, through New and Validate.
		{"vocab 0", func() error { return newWith(withCfg(func(c *Config) { c.VocabSize = 0 })) }, "gpt.New: cfg.VocabSize must be > 0, got 0"},
		{"block size -1", func() error { return newWith(withCfg(func(c *Config) { c.BlockSize = -1 })) }, "gpt.New: cfg.BlockSize must be > 0, got -1"},
		{"no layers", func() error { return newWith(withCfg(func(c *Config) { c.NLayer = 0 })) }, "gpt.New: cfg.NLayer must be in [1, 1024], got 0"},
		{"no heads", func() error { return newWith(withCfg(func(c *Config) { c.NHead = 0 })) }, "gpt.New: cfg.NHead must be > 0, got 0"},
		{"width not divisible", func() error { return newWith(withCfg(func(c *Config) { c.NHead = 3 })) }, "gpt.New: cfg.NEmbd must be a positive multiple of NHead (3), got 64"},
		{"dropout 1", func() error { return newWith(withCfg(func(c *Config) { c.Dropout = 1 })) }, "gpt.New: cfg.Dropout must be in [0, 1), got 1"},
		{"dropout NaN", func() error { return newWith(withCfg(func(c *Config) { c.Dropout = math.NaN() })) }, "gpt.New: cfg.Dropout must be in [0, 1), got NaN"},
		{"model too big", func() error {
			return newWith(Config{VocabSize: 1 << 20, BlockSize: 8, NLayer: 1, NHead: 1, NEmbd: 4096})
		}, "gpt.New: cfg {VocabSize:1048576 BlockSize:8 NLayer:1 NHead:1 NEmbd:4096 Dropout:0 Bias:false} would have 4.5e+09 parameters, more than the 1073741824 (4 GiB of float32 weights) this package builds"},
		{"a million layers", func() error { return newWith(withCfg(func(c *Config) { c.NLayer, c.NEmbd = 1<<20, 4 })) }, "gpt.New: cfg.NLayer must be in [1, 1024], got 1048576"},
		{"nil generator", func() error { _, err := New(cfg, nil); return err }, "gpt.New: g must be a *torchrand.Generator (torchrand.New(seed)), got nil"},
		{"Validate", func() error { return Config{VocabSize: 5, BlockSize: 4}.Validate() }, "gpt.Config: NLayer must be in [1, 1024], got 0"},

		// TrainConfig, through NewTrainer, Validate and AdamW.
		{"batch 0", func() error { return trainWith(withTC(func(c *TrainConfig) { c.BatchSize = 0 })) }, "gpt.Model.NewTrainer: tc.BatchSize must be > 0, got 0"},
		{"lr NaN", func() error { return trainWith(withTC(func(c *TrainConfig) { c.LearningRate = math.NaN() })) }, "gpt.Model.NewTrainer: tc.LearningRate must be finite and > 0, got NaN"},
		{"min lr above lr", func() error { return trainWith(withTC(func(c *TrainConfig) { c.MinLR = 1 })) }, "gpt.Model.NewTrainer: tc.MinLR must be in [0, LearningRate = 0.003], got 1"},
		{"decay before warm-up ends", func() error { return trainWith(withTC(func(c *TrainConfig) { c.LRDecayIters = 2 })) }, "gpt.Model.NewTrainer: tc.LRDecayIters must be >= WarmupIters (5), got 2"},
		{"beta2 1", func() error { return trainWith(withTC(func(c *TrainConfig) { c.Beta2 = 1 })) }, "gpt.Model.NewTrainer: tc.Beta2 must be in [0, 1), got 1"},
		{"grad clip -1", func() error { return trainWith(withTC(func(c *TrainConfig) { c.GradClip = -1 })) }, "gpt.Model.NewTrainer: tc.GradClip must be finite and >= 0 (0: no clipping), got -1"},
		{"weight decay Inf", func() error { return trainWith(withTC(func(c *TrainConfig) { c.WeightDecay = math.Inf(1) })) }, "gpt.Model.NewTrainer: tc.WeightDecay must be finite and >= 0, got +Inf"},
		{"eval interval -5", func() error { return trainWith(withTC(func(c *TrainConfig) { c.EvalInterval = -5 })) }, "gpt.Model.NewTrainer: tc.EvalInterval must be >= 0 (0: only at the end), got -5"},
		{"eval iters 0", func() error { return trainWith(withTC(func(c *TrainConfig) { c.EvalIters = 0 })) }, "gpt.Model.NewTrainer: tc.EvalIters must be > 0, got 0"},
		{"max iters -1", func() error { return withTC(func(c *TrainConfig) { c.MaxIters = -1 }).Validate() }, "gpt.TrainConfig: MaxIters must be >= 0, got -1"},
		{"AdamW", func() error {
			return argerr.CatchAny(func() { AdamW(withTC(func(c *TrainConfig) { c.WarmupIters = -1 })) })
		}, "gpt.AdamW: tc.WarmupIters must be >= 0, got -1"},
		{"training ids too few", func() error { _, err := m.NewTrainer(tc, data[:32], valIDs); return err }, "gpt.Model.NewTrainer: trainIDs has 32 ids, need more than block_size 32 (one window and its targets)"},
		{"validation id outside vocab", func() error { _, err := m.NewTrainer(tc, trainIDs, badIDs); return err }, "gpt.Model.NewTrainer: valIDs[7] = 70 is outside the vocabulary [0, 65)"},
		{"nil model", func() error { _, err := nilModel.NewTrainer(tc, trainIDs, valIDs); return err }, "gpt.Model.NewTrainer: m is nil: make the model with gpt.New or gpt.Load (and check their error)"},

		// Token ids and shapes.
		{"input id 70", func() error { _, err := m.Logits(ids(3, 70, 4)); return err }, "gpt.Model.Logits: tokens[0, 1] = 70 is outside the vocabulary [0, 65)"},
		{"input id -1", func() error { _, err := m.Logits(ids(-1)); return err }, "gpt.Model.Logits: tokens[0, 0] = -1 is outside the vocabulary [0, 65)"},
		{"int64 input id 65", func() error {
			_, err := m.Logits(tensors.FromFlatDataAndDimensions([]int64{1, 2, 3, 65}, 2, 2))
			return err
		}, "gpt.Model.Logits: tokens[1, 1] = 65 is outside the vocabulary [0, 65)"},
		{"nil tokens", func() error { _, err := m.Logits(nil); return err }, "gpt.Model.Logits: tokens must be an integer [B, T] tensor, got nil"},
		{"float tokens", func() error { _, err := m.Logits(tensors.FromValue([][]float32{{1, 2}})); return err }, "gpt.Model.Logits: tokens must be an integer [B, T] tensor, got (Float32)[1, 2]"},
		{"rank-1 tokens", func() error { _, err := m.Logits(tensors.FromValue([]int32{1, 2})); return err }, "gpt.Model.Logits: tokens must be an integer [B, T] tensor, got (Int32)[2]"},
		{"context longer than block_size", func() error { _, err := m.Logits(ids(syntheticData(40)...)); return err }, "gpt.Model.Logits: tokens shape (Int32)[1, 40] has 40 positions, want 1 to the model's block_size 32"},
		{"target 70", func() error { _, err := m.BatchLoss(ids(1, 2), ids(2, 70)); return err }, "gpt.Model.BatchLoss: y[0, 1] = 70 is outside the vocabulary [0, 65)"},
		{"targets of another shape", func() error { _, err := m.BatchLoss(ids(1, 2), ids(2)); return err }, "gpt.Model.BatchLoss: y (the targets) must have the shape of x (Int32)[1, 2], got (Int32)[1, 1]"},
		{"float targets", func() error { _, err := m.BatchLoss(ids(1, 2), tensors.FromValue([][]float32{{1, 2}})); return err }, "gpt.Model.BatchLoss: y must be an integer [B, T] tensor, got (Float32)[1, 2]"},
		{"split too short", func() error { _, err := m.SplitLoss(data[:32]); return err }, "gpt.Model.SplitLoss: ids has 32 ids, which make no window of block_size 32 tokens plus a target"},
		{"split id outside vocab", func() error { _, err := m.SplitLoss(badIDs); return err }, "gpt.Model.SplitLoss: ids[7] = 70 is outside the vocabulary [0, 65)"},
		{"heads of a long line", func() error { _, err := m.AttentionWeights(syntheticData(33)); return err }, "gpt.Model.AttentionWeights: ids has 33 tokens, want 1 to the model's block_size 32: use a shorter line"},
		{"heads of nothing", func() error { _, err := m.AttentionWeights(nil); return err }, "gpt.Model.AttentionWeights: ids has 0 tokens, want 1 to the model's block_size 32: use a shorter line"},

		// Generation options.
		{"empty prompt", func() error { _, err := m.Generate(nil, 5, SampleOptions{}); return err }, `gpt.Model.Generate: prompt is empty: give at least one token (e.g. the id of "\n")`},
		{"negative n", func() error { _, err := m.Generate([]int32{1}, -1, SampleOptions{}); return err }, "gpt.Model.Generate: n must be >= 0, got -1"},
		{"temperature -1", func() error { _, err := m.Generate([]int32{1}, 1, SampleOptions{Temperature: -1}); return err }, "gpt.Model.Generate: opts.Temperature must be finite and >= 0 (0: greedy), got -1"},
		{"temperature Inf", func() error {
			_, err := m.Generate([]int32{1}, 1, SampleOptions{Temperature: math.Inf(1)})
			return err
		}, "gpt.Model.Generate: opts.Temperature must be finite and >= 0 (0: greedy), got +Inf"},
		{"top-k -2", func() error { _, err := m.Generate([]int32{1}, 1, SampleOptions{Temperature: 1, TopK: -2}); return err }, "gpt.Model.Generate: opts.TopK must be >= 0 (0: all tokens), got -2"},
		{"prompt id 70", func() error { _, err := m.Generate([]int32{3, 70}, 1, SampleOptions{Temperature: 1}); return err }, "gpt.Model.Generate: prompt[1] = 70 is outside the vocabulary [0, 65)"},

		// Run options.
		{"negative steps", func() error { _, err := tr.Run(RunOptions{Steps: -1}); return err }, "gpt.Trainer.Run: opts.Steps must be >= 0 (0: up to TrainConfig.MaxIters = 60), got -1"},
		{"nil trainer", func() error { _, err := nilTrainer.Run(RunOptions{}); return err }, "gpt.Trainer.Run: t is nil: make the trainer with Model.NewTrainer or gpt.Resume (and check their error)"},

		// Tokenizer and corpus.
		{"Latin-1 text", func() error { _, err := NewTokenizer("to be\nor not to b\xe9"); return err }, "gpt.NewTokenizer: text is not valid UTF-8: byte 0xe9 at byte offset 17 (line 2) starts no UTF-8 character; save the text as UTF-8"},
		{"empty text", func() error { _, err := NewTokenizer(""); return err }, "gpt.NewTokenizer: text is empty: no characters to make a vocabulary of"},
		{"encode invalid UTF-8", func() error { _, err := tok.Encode("hel\xff"); return err }, "gpt.Tokenizer.Encode: text is not valid UTF-8: byte 0xff at byte offset 3 (line 1) starts no UTF-8 character; save the text as UTF-8"},
		{"encode unknown character", func() error { _, err := tok.Encode("hex"); return err }, "gpt.Tokenizer.Encode: text has character 'x' at position 2, which is not in the 9-character vocabulary"},
		{"decode id 9", func() error { _, err := tok.Decode([]int32{1, 9}); return err }, "gpt.Tokenizer.Decode: ids[1] = 9 is outside the vocabulary [0, 9)"},
		{"nil tokenizer", func() error { var nt *Tokenizer; _, err := nt.Encode("a"); return err }, "gpt.Tokenizer.Encode: t is a tokenizer without a vocabulary: make it with gpt.NewTokenizer(text) (and check its error)"},
		{"binary corpus", func() error { corpus("First\x00\x80"); _, _, err := LoadCorpus(""); return err }, "gpt.LoadCorpus: corpus $DATA/tinyshakespeare.txt is not valid UTF-8: byte 0x80 at byte offset 6 (line 1) starts no UTF-8 character; save the text as UTF-8"},
		{"empty corpus", func() error { corpus(""); _, _, err := LoadCorpus(""); return err }, "gpt.LoadCorpus: corpus $DATA/tinyshakespeare.txt is empty"},
		{"missing corpus", func() error {
			corpus("<none>")
			_, _, err := LoadCorpus("")
			if !errors.Is(err, ErrNoCorpus) {
				t.Errorf("missing corpus: not ErrNoCorpus")
			}
			return err
		}, "gpt.LoadCorpus: corpus not found: tinyshakespeare.txt is not in $DATA/tinyshakespeare.txt; download it once from " + CorpusURL + " and save it in one of those places (or set ATTNBOOK_DATA to its folder)"},
		{"batches of nothing", func() error { _, err := NewBatches("x", data, 0, 4, 1, 0); return err }, "gpt.NewBatches: blockSize must be > 0, got 0"},

		// Head statistics.
		{"stats of [T, T]", func() error { _, err := HeadStats([]*tensors.Tensor{tensors.FromShape(shapeF32(4, 4))}); return err }, "gpt.HeadStats: weights[0] must be a float32 [H, T, T] tensor (one layer of Model.AttentionWeights), got (Float32)[4, 4]"},
		{"stats of [H, T, S]", func() error {
			_, err := HeadStats([]*tensors.Tensor{tensors.FromShape(shapeF32(2, 4, 4)), tensors.FromShape(shapeF32(2, 4, 5))})
			return err
		}, "gpt.HeadStats: weights[1] must be a float32 [H, T, T] tensor (one layer of Model.AttentionWeights), got (Float32)[2, 4, 5]"},
		{"stats of nil", func() error { _, err := HeadStats([]*tensors.Tensor{nil}); return err }, "gpt.HeadStats: weights[0] must be a float32 [H, T, T] tensor (one layer of Model.AttentionWeights), got nil"},
		{"table of other heads", func() error { _, err := FormatHeadStats(make([]HeadStat, 2), make([]HeadStat, 3)); return err }, "gpt.FormatHeadStats: before has 2 heads, after has 3: want the stats of the same model's heads, before and after training"},
		{"summary of nothing", func() error { _, err := SummarizeHeads(nil, nil); return err }, "gpt.SummarizeHeads: after has no heads to summarize"},

		// Checkpoints.
		{"missing checkpoint", func() error { _, err := Load(filepath.Join(root, "nothing"), Config{}); return err }, "gpt.Load: checkpoint folder $ROOT/nothing does not exist"},
		{"empty folder", func() error { _, err := Load(empty, Config{}); return err }, "gpt.Load: $ROOT/empty holds no checkpoint (no checkpoint-*.json)"},
		{"checkpoint is a file", func() error { _, err := Load(filepath.Join(empty, "f"), Config{}); return err }, "gpt.Load: $ROOT/empty/f is a file, want the checkpoint folder Save writes"},
		{"vocab mismatch", func() error { _, err := Load(ckpt, Config{VocabSize: 50}); return err }, "gpt.Load: checkpoint in $DIR was trained with a vocabulary of 65 tokens, but the tokenizer has 50: it belongs to another corpus or tokenizer"},
		{"negative want", func() error { _, err := Load(ckpt, Config{NHead: -1}); return err }, "gpt.Load: want.NHead must be >= 0 (0: any), got -1"},
		{"truncated weights", func() error {
			dir := corrupt(".bin", nil)
			_, err := Load(dir, Config{VocabSize: 65})
			return relabel(err, dir)
		}, "gpt.Load: checkpoint in $DIR is corrupt or unreadable: binary file: unexpected EOF"},
		{"garbage index", func() error {
			dir := corrupt(".json", []byte("{not json"))
			_, err := Load(dir, Config{VocabSize: 65})
			return relabel(err, dir)
		}, "gpt.Load: checkpoint in $DIR is corrupt or unreadable: index: invalid character 'n' looking for beginning of object key string"},
		{"save nowhere", func() error { return m.Save("") }, "gpt.Model.Save: dir is empty: give the folder to save the checkpoint in"},
		{"resume a plain save", func() error { _, err := Resume(plain, cfg, tc, trainIDs, valIDs); return relabel(err, plain) }, "gpt.Resume: dir $DIR holds a model without training state (written by Model.Save): load it with gpt.Load, or train it with Model.NewTrainer"},
		{"resume with another batch size", func() error {
			_, err := Resume(ckpt, cfg, withTC(func(c *TrainConfig) { c.BatchSize = 4 }), trainIDs, valIDs)
			return err
		}, "gpt.Resume: tc.BatchSize is 4, but the run saved in $DIR used 8: resuming needs the same settings (delete the folder to start over)"},
		{"resume on other data", func() error { _, err := Resume(ckpt, cfg, tc, valIDs, valIDs); return err }, "gpt.Resume: trainIDs (600 ids, FNV-1a 7760c78218458a20) are not the ids the run saved in $DIR trained on (5400 ids, 7b249b64d2b708c7)"},

		// Graph builders panic with the same errors.
		{"Loss of [B, T] logits", func() error {
			return argerr.CatchAny(func() {
				g := NewGraph(m.backend, "loss")
				Loss(Parameter(g, "logits", shapeF32(2, 3)), Parameter(g, "y", shapes.Make(dtypes.Int32, 2, 3)))
			})
		}, "gpt.Loss: logits must be a float [B, T, V] node, got (Float32)[2, 3]"},
		{"Forward of float tokens", func() error {
			return argerr.CatchAny(func() {
				m.Forward(nil, Parameter(NewGraph(m.backend, "forward"), "x", shapeF32(1, 3)))
			})
		}, "gpt.Model.Forward: tokens must be an integer [B, T] node, got (Float32)[1, 3]"},
	}
	if len(tests) < 40 {
		t.Fatalf("%d cases, want at least 40", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil {
				t.Fatal("no error")
			}
			got, _, _ := strings.Cut(err.Error(), "\n")
			got = strings.ReplaceAll(got, ckpt, "$DIR")
			if d := os.Getenv("ATTNBOOK_DATA"); d != "" {
				got = strings.ReplaceAll(got, d, "$DATA")
			}
			got = strings.ReplaceAll(got, root, "$ROOT")
			if want := tc.want; got != want {
				t.Errorf("first line\n got: %s\nwant: %s", got, want)
			}
			var ae *ArgumentError
			if errors.As(err, &ae) != errors.Is(err, ErrInvalidArgument) {
				t.Errorf("errors.As(*ArgumentError) and errors.Is(ErrInvalidArgument) disagree for %v", err)
			}
		})
	}
}

// relabel replaces dir by $DIR in err's message.
func relabel(err error, dir string) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.ReplaceAll(err.Error(), dir, "$DIR"))
}

func shapeF32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
