package gpt

import "math"

// Config is the shape of a GPT, nanoGPT's GPTConfig.
type Config struct {
	VocabSize int     // V: tokens the model knows (65 characters for Tiny Shakespeare)
	BlockSize int     // the most tokens one input may have (positions of wpe)
	NLayer    int     // L: transformer blocks
	NHead     int     // H: attention heads per block
	NEmbd     int     // C: width of the residual stream; the head size is C/H
	Dropout   float64 // dropout probability in training (0: none, as in the nanoGPT CPU recipe)
	Bias      bool    // biases in the Linear layers and LayerNorms (nanoGPT's CPU recipe: false)
}

// HeadSize is hs = NEmbd / NHead (0 when NHead is not positive).
func (c Config) HeadSize() int {
	if c.NHead <= 0 {
		return 0
	}
	return c.NEmbd / c.NHead
}

// Validate returns an *ArgumentError naming the first field that cannot make a model
// ("gpt.Config: NHead must be > 0, got 0"), or nil.
func (c Config) Validate() error { return c.check("Config", "") }

// NumParams counts the learnable scalars (the tied LM head counted once, as nanoGPT's
// get_num_params(non_embedding=False)).
func (c Config) NumParams() int {
	C, b := c.NEmbd, 0
	if c.Bias {
		b = 1
	}
	ln := C * (1 + b)
	block := 2*ln + 4*(C*C+b*C) + (C*4*C + b*4*C) + (4*C*C + b*C)
	return c.VocabSize*C + c.BlockSize*C + c.NLayer*block + ln
}

// TrainConfig holds the training settings of nanoGPT's train.py that this package follows.
type TrainConfig struct {
	Seed         int64   // torch.manual_seed before the model is built (initial weights)
	BatchSeed    int64   // seed of the generator that draws training batches (unused with NanoGPTDraws)
	BatchSize    int     // B: sequences per step
	MaxIters     int     // training steps
	LearningRate float64 // peak learning rate, after warm-up
	MinLR        float64 // learning rate at the end of the cosine decay
	WarmupIters  int     // linear warm-up steps
	LRDecayIters int     // step at which the cosine decay reaches MinLR (usually MaxIters)
	WeightDecay  float64 // AdamW weight decay, on matrices and embeddings only
	Beta1, Beta2 float64 // AdamW moment decays
	GradClip     float64 // clip the global gradient norm to this (0: no clipping)
	EvalInterval int     // evaluate train and validation loss every this many steps (0: only at the end)
	EvalIters    int     // batches per loss estimate

	// NanoGPTDraws draws every batch, for training and for the estimates, from the generator
	// that initialized the model, in nanoGPT train.py's order: the first training batch, then at
	// each estimate EvalIters training and EvalIters validation batches, each next training batch
	// drawn before the estimate that precedes its step. With the model's seed these are the
	// batches of nanoGPT's own run. false (the course's default) draws training batches from a
	// generator seeded with BatchSeed and estimates on fixed batches, so that estimates compare
	// across steps and notebook cells.
	NanoGPTDraws bool
}

// Validate returns an *ArgumentError naming the first field that cannot train
// ("gpt.TrainConfig: BatchSize must be > 0, got 0"), or nil.
func (t TrainConfig) Validate() error { return t.check("TrainConfig", "") }

// LR is nanoGPT's get_lr(it): linear warm-up LearningRate·(it+1)/(WarmupIters+1) for it <
// WarmupIters, then cosine decay from LearningRate to MinLR at LRDecayIters, MinLR after it.
func (t TrainConfig) LR(it int) float64 {
	if it < t.WarmupIters {
		return t.LearningRate * float64(it+1) / float64(t.WarmupIters+1)
	}
	if it > t.LRDecayIters {
		return t.MinLR
	}
	ratio := 0.0
	if t.LRDecayIters > t.WarmupIters {
		ratio = float64(it-t.WarmupIters) / float64(t.LRDecayIters-t.WarmupIters)
	}
	return t.MinLR + 0.5*(1+math.Cos(math.Pi*ratio))*(t.LearningRate-t.MinLR)
}

// NanoGPTCPU is nanoGPT README's CPU recipe for the Shakespeare characters ("about 3 minutes on a
// MacBook, validation loss about 1.88"): n_layer=4, n_head=4, n_embd=128, block_size=64,
// batch_size=12, max_iters=2000, lr_decay_iters=2000, dropout=0, with config/train_shakespeare_char.py's
// learning rate 1e-3 (min 1e-4), warm-up 100, beta2 0.99, and train.py's weight decay 0.1, grad
// clip 1.0 and bias=False. eval_iters is the recipe's 20, eval_interval train.py's 250, and the
// batches are nanoGPT's own (NanoGPTDraws, seed 1337).
func NanoGPTCPU(vocabSize int) (Config, TrainConfig) {
	return Config{VocabSize: vocabSize, BlockSize: 64, NLayer: 4, NHead: 4, NEmbd: 128},
		TrainConfig{Seed: 1337, BatchSeed: 1338, BatchSize: 12, MaxIters: 2000,
			LearningRate: 1e-3, MinLR: 1e-4, WarmupIters: 100, LRDecayIters: 2000,
			WeightDecay: 0.1, Beta1: 0.9, Beta2: 0.99, GradClip: 1.0, EvalInterval: 250, EvalIters: 20,
			NanoGPTDraws: true}
}

// Tiny is a model and schedule small enough for tests: 2 blocks of 4 heads, C = 64, 32 tokens,
// batches of 8, 60 steps at learning rate 3e-3.
func Tiny(vocabSize int) (Config, TrainConfig) {
	return Config{VocabSize: vocabSize, BlockSize: 32, NLayer: 2, NHead: 4, NEmbd: 64},
		TrainConfig{Seed: 1337, BatchSeed: 7, BatchSize: 8, MaxIters: 60,
			LearningRate: 3e-3, MinLR: 3e-4, WarmupIters: 5, LRDecayIters: 60,
			WeightDecay: 0.1, Beta1: 0.9, Beta2: 0.99, GradClip: 1.0, EvalInterval: 0, EvalIters: 4}
}
