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
// # Shapes
//
// Doc comments name shapes in backticks with nanoGPT's letters: B batch, T tokens, C = NEmbd,
// H heads, hs = C/H head size, V vocabulary, L layers.
package gpt
