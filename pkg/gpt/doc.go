// Package gpt is a small decoder-only GPT (Radford et al. 2018/2019, in the shape of Karpathy's
// nanoGPT) whose attention is the course's: every block calls pkg/attention's graph functions —
// Linear, SplitHeads, Scores, CausalMaskFill, ScaleScores, StableSoftmax, ContextVectors,
// MergeHeads — the steps notebooks 01–06 teach one at a time.
//
// The model (Config) is
//
//	tokens `[B, T]` → wte(tokens) + wpe(0…T-1)                      `[B, T, C]`
//	N blocks:  x = x + out_proj(attention(ln_1(x)))                  `[B, T, C]`
//	           x = x + c_proj(GELU(c_fc(ln_2(x))))                   `[B, T, C]` (c_fc: `[B, T, 4C]`)
//	ln_f, then logits = x · wteᵀ (the LM head shares the token embedding) `[B, T, V]`
//
// with pre-LayerNorm blocks (Xiong et al. 2020), C = NEmbd, V = VocabSize, T ≤ BlockSize, and
// causal multi-head attention of NHead heads of C/NHead. The loss is the mean cross-entropy of
// next-token prediction; training is AdamW (Loshchilov & Hutter 2019) with nanoGPT's parameter
// groups (weight decay on matrices only), linear warm-up and cosine decay of the learning rate, and
// gradient clipping by global norm, run by GoMLX's train.Trainer and train.Loop.
//
// Generate samples text one token at a time, on the whole context at every step, or with a
// key–value cache (SampleOptions.KVCache: each block's keys and values kept between steps, the
// same tokens for the same seed, several times faster within BlockSize; see cache.go).
//
// # Same numbers as PyTorch
//
// New draws the initial weights from a torchrand.Generator in exactly the order nanoGPT's GPT
// module draws them after torch.manual_seed (construction draws, then normal(0, 0.02) init, then
// the scaled residual projections), and Batches draws batch offsets with torch.randint's
// algorithm. testdata/reference.py is the PyTorch twin; its goldens pin the first loss (1e-5) and
// the first ten AdamW steps (1e-3).
//
// # Bad input
//
// Every function checks its arguments before it builds or runs a graph, and a bad one is an
// *ArgumentError (errors.Is(err, ErrInvalidArgument)) whose message names the function, the
// argument, what was expected and what was given, as pkg/attention's do:
// "gpt.Model.Logits: tokens[0, 1] = 50 is outside the vocabulary [0, 10)" (PyTorch raises
// "index out of range in self" there), "gpt.Model.NewTrainer: tc.BatchSize must be > 0, got 0",
// "gpt.NewTokenizer: text is not valid UTF-8: byte 0xe9 at byte offset 17 (line 2) …". Graph
// builders (Model.Forward, Loss, AdamW) panic with the same errors. Load checks a checkpoint's
// every byte before using it: damaged or foreign files are errors, never panics.
//
// # Checkpoints and resuming
//
// Trainer.Run saves (RunOptions.CheckpointDir) the weights, AdamW's moments and step, the state
// of the batch stream and the run's history; Resume continues such a run bit for bit, so a run
// interrupted at step 150 and resumed to 300 ends with the weights of 300 steps in one go.
//
// # Shapes
//
// Doc comments name shapes in backticks with nanoGPT's letters: B batch, T tokens, C = NEmbd,
// H heads, hs = C/H head size, V vocabulary, L layers.
package gpt
