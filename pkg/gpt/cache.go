package gpt

import (
	"fmt"
	"math"
	"slices"

	"github.com/attnbook/attnbook/pkg/attention"
	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// This file is generation with a key–value cache (SampleOptions.KVCache).
//
// Without a cache, every new token runs the model on the whole context: T positions through
// every block, although only the last position's logits are used and the keys and values of the
// earlier positions are the same as one step before. With a cache, every block's keys and values
// are kept, `[1, H, BlockSize, hs]` each, and a step runs the model on the one new token: its
// query attends to the cached keys, and its key and value are written into the cache at its
// position. A prompt of several tokens goes through once (the prefill: Forward's graph, which also
// returns the keys and values), then each new token is one step; a one-token prompt is the first
// step.
//
// The cache is our own, not GoMLX's ml/layers/attention/kvcache: that cache belongs to GoMLX's
// attention layer (its scopes, rolling windows, attention sinks, padded bucket lengths), while
// this model is built from the course's graph functions. The prefill calls exactly the functions
// the full-context path calls, so its logits are the full path's, bit for bit; a step keeps a key
// axis of BlockSize positions with a -Inf mask after its own, as the full path's causal row has,
// and computes its products with the backend's matrix kernels (see dense): its logits differ from
// the full path's by float32 rounding only (below 1e-6 in the tests), and the drawn text is the
// same for the same seed.
//
// Past the block: the model learned one position embedding per position 0…BlockSize-1, and the
// full-context path crops the context to the last BlockSize tokens, which puts every token at a
// new position each step (the token at position 5 moves to 4) and drops the first token from every
// block's context. Every cached key and value was computed at its old position, with its old
// context: none of them is what the cropped window computes. So a plain cache no longer applies,
// and once the text is longer than the block the cached path recomputes the whole window for each
// new token, exactly as the path without a cache does (same graph, same text, no speedup).
// Models with rotary positions (RoPE, Su et al. 2021) rotate each query and key by its own
// position, so that a score depends only on the distance between query and key: a cached key
// never has to move, and generation past the training length keeps (or evicts, a sliding window)
// cached keys instead of recomputing them.

// CacheBytes is the memory that the key–value cache of one sequence holds per token, in bytes
// at float32: keys and values (2) of every block (L) and every head (H), hs numbers each.
func (c Config) CacheBytes() int { return 2 * c.NLayer * c.NHead * c.HeadSize() * 4 }

// generateCached is Generate with a key–value cache: same arguments (already checked), same
// draws, same tokens.
func (m *Model) generateCached(prompt []int32, n int, opts SampleOptions) ([]int32, error) {
	T, V := m.cfg.BlockSize, m.cfg.VocabSize
	g := torchrand.New(opts.Seed)
	ids := slices.Clone(prompt)
	u := make([]float64, 1)
	probs := make([]float64, V)
	var cache []*tensors.Tensor // every block's keys and values, [1, H, T, hs]; nil until the prompt is in
	for range n {
		var row []float32
		switch {
		case len(ids) > T:
			// Past the block: positions shift every step, no cached key is valid (see above).
			cache = nil
			window := slices.Clone(ids[len(ids)-T:])
			logits, err := m.windowLogits(window)
			if err != nil {
				return nil, err
			}
			row = tensors.MustCopyFlatData[float32](logits)[(T-1)*V:]
		case cache == nil && len(ids) > 1:
			// Prefill: the prompt, padded to the block as the full path pads it, in one pass that
			// also fills the cache. Causal attention ignores the padding, and the steps overwrite
			// its keys and values before any query can see them. (A one-token prompt is just a
			// step at position 0 on an empty cache: padding it to the block would compute T-1 more
			// positions that nothing reads.)
			window := make([]int32, T)
			copy(window, ids)
			logits, c, err := m.decode("kv prefill", window, 0, nil)
			if err != nil {
				return nil, err
			}
			cache = c
			row = tensors.MustCopyFlatData[float32](logits)[(len(ids)-1)*V : len(ids)*V]
		default:
			// One step: the last token, at its position, against the cache (nil: empty).
			pos := len(ids) - 1
			logits, c, err := m.decode("kv step", ids[pos:], pos, cache)
			if err != nil {
				return nil, err
			}
			cache = c
			row = tensors.MustCopyFlatData[float32](logits)
		}
		var next int32
		if opts.Temperature == 0 {
			next = int32(argmax(row))
		} else {
			g.Float64s(u)
			next = int32(sample(row, opts.Temperature, opts.TopK, u[0], probs))
		}
		ids = append(ids, next)
	}
	return ids[len(prompt):], nil
}

// decode runs the model on tokens (one sequence of S tokens at positions pos … pos+S-1) with
// cache, every block's keys and values `[1, H, BlockSize, hs]` in the order keys of block 0,
// values of block 0, keys of block 1, … (nil: empty). It returns the logits `[1, S, V]` and the
// cache with the tokens' keys and values written in; the cache passed in is used up (its buffers
// are donated to the graph, which writes the new rows into them). name picks the compiled graph.
func (m *Model) decode(name string, tokens []int32, pos int, cache []*tensors.Tensor) (logits *tensors.Tensor, newCache []*tensors.Tensor, err error) {
	cfg := m.cfg
	if cache == nil {
		for range 2 * cfg.NLayer {
			cache = append(cache, tensors.FromShape(shapes.Make(dtypes.Float32, 1, cfg.NHead, cfg.BlockSize, cfg.HeadSize())))
		}
	}
	b, err := m.generationBackend()
	if err != nil {
		return nil, nil, err
	}
	e, err := m.slicesExec(b, name, func(scope *model.Scope, in []*Node) []*Node {
		logits, cache := m.cachedForward(scope, in[0], in[1], in[2:])
		return append([]*Node{logits}, cache...)
	})
	if err != nil {
		return nil, nil, err
	}
	args := []any{tensors.FromFlatDataAndDimensions(slices.Clone(tokens), 1, len(tokens)), int32(pos)}
	for _, c := range cache {
		// Donated: the step writes the new position into the buffer itself instead of a copy.
		d, err := DonateTensorBuffer(c, b, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("gpt.Model.Generate (KV cache): %w", err)
		}
		args = append(args, d)
	}
	out, err := e.Call(args...)
	if err != nil {
		return nil, nil, fmt.Errorf("gpt.Model.Generate (KV cache): %w", err)
	}
	return out[0], out[1:], nil
}

// slicesExec is exec for graph functions of many inputs and outputs.
func (m *Model) slicesExec(b compute.Backend, name string, fn func(*model.Scope, []*Node) []*Node) (*model.Exec, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropStaleExecsLocked()
	if e, ok := m.execs[name]; ok {
		return e, nil
	}
	e, err := model.NewExec(b, m.store, fn)
	if err != nil {
		return nil, err
	}
	m.execs[name] = e
	return e, nil
}

// cachedForward is Forward (evaluation mode, no dropout) on new tokens `[B, S]` at positions pos
// … pos+S-1 (pos an int32 scalar) with a key–value cache: cache holds every block's keys and
// values `[B, H, BlockSize, hs]` (keys of block 0, values of block 0, keys of block 1, …) of the
// earlier positions. S is 1 (a step: one token at pos, of one sequence: B = 1) or BlockSize (the
// prefill: a whole window at pos 0). Each block writes the new tokens' keys and values into its
// cache at pos and lets each new token attend to the cached positions up to its own. It returns
// the logits `[B, S, V]` and the updated cache.
//
// The prefill computes exactly what Forward computes without Fused (the same graph functions on
// the same shapes; with Fused the full path's attention is the fused op, equal up to rounding).
// A step (see step) computes its products with DotGeneral (see dense) and its scores with a -Inf
// mask on the positions after pos.
func (m *Model) cachedForward(scope *model.Scope, tokens, pos *Node, cache []*Node) (logits *Node, newCache []*Node) {
	cfg := m.cfg
	L, H, T, hs := cfg.NLayer, cfg.NHead, cfg.BlockSize, cfg.HeadSize()
	if tokens.Rank() != 2 || !tokens.DType().IsInt() {
		panic(fmt.Errorf("gpt.Model.cachedForward: tokens must be an integer [B, S] tensor, got %s", tokens.Shape()))
	}
	B, S := tokens.Shape().Dim(0), tokens.Shape().Dim(1)
	if S != 1 && S != T {
		panic(fmt.Errorf("gpt.Model.cachedForward: tokens %s: want one token (a step) or block_size %d tokens (the prefill), got %d", tokens.Shape(), T, S))
	}
	want := []int{B, H, T, hs}
	if len(cache) != 2*L {
		panic(fmt.Errorf("gpt.Model.cachedForward: cache has %d tensors, want 2·L = %d", len(cache), 2*L))
	}
	for i, c := range cache {
		if !slices.Equal(c.Shape().Dimensions, want) {
			panic(fmt.Errorf("gpt.Model.cachedForward: cache[%d] is %s, want %v", i, c.Shape(), want))
		}
	}
	g := tokens.Graph()
	if scope == nil {
		scope = m.store.RootScope()
	}
	pos = ConvertDType(pos, dtypes.Int32)
	positions := Add(Iota(g, shapes.Make(dtypes.Int32, S), 0), pos)                                    // [S]: pos…pos+S-1
	tok := Gather(weight(scope, g, "/wte/weight"), ExpandAxes(ConvertDType(tokens, dtypes.Int32), -1)) // [B, S, C]
	x := Add(tok, ExpandAxes(Gather(weight(scope, g, "/wpe/weight"), ExpandAxes(positions, -1)), 0))   // [B, S, C]
	future := GreaterThan(Iota(g, shapes.Make(dtypes.Int32, S, T), 1), ExpandAxes(positions, -1))      // [S, T]: key after query
	if S == 1 {
		return m.step(scope, x, pos, future, cache)
	}
	// The prefill: Forward's blocks, each also returning its keys and values, which replace the
	// cache.
	for l := range L {
		h := fmt.Sprintf("/h/%d", l)
		prefix := h + "/attn"
		in := m.layerNorm(scope, h+"/ln_1", x)
		k := attention.SplitHeads(m.linear(scope, prefix+"/W_key", in), H)   // [B, H, T, hs]
		q := attention.SplitHeads(m.linear(scope, prefix+"/W_query", in), H) // [B, H, T, hs]
		v := attention.SplitHeads(m.linear(scope, prefix+"/W_value", in), H) // [B, H, T, hs]
		newCache = append(newCache, k, v)
		scores := attention.Scores(q, k)                                      // [B, H, T, T]
		scores = attention.MaskFill(scores, future, math.Inf(-1))             // future keys: -Inf
		scores = attention.ScaleScores(scores, hs)                            // / sqrt(hs)
		heads := attention.ContextVectors(attention.StableSoftmax(scores), v) // [B, H, T, hs]
		x = Add(x, m.linear(scope, prefix+"/out_proj", attention.MergeHeads(heads)))
		y := m.linear(scope, h+"/mlp/c_fc", m.layerNorm(scope, h+"/ln_2", x)) // [B, T, 4C]
		x = Add(x, m.linear(scope, h+"/mlp/c_proj", gelu(y)))                 // [B, T, C]
	}
	x = m.layerNorm(scope, "/ln_f", x)                                         // [B, T, C]
	return attention.Linear(x, weight(scope, g, "/wte/weight"), nil), newCache // [B, T, V]: tied LM head
}

// step is cachedForward for one token of one sequence: x is its embedding `[1, 1, C]`, pos its
// position (an int32 scalar), future `[1, T]` marks the keys after it. It returns the logits `[1,
// 1, V]` and the cache with the token's keys and values written at pos.
//
// The token is carried as rows `[R, C]`: R is 1, or 4 where the backend's small products multiply
// tiles of four rows (see rowsTimesT), the token in row 0 and the other rows zero to begin with.
// Every operation of a block is row by row (layer norms, products with the weights, GELU, sums),
// and in the attention each row is a query of its own against the same cache, so row 0 is the
// token's computation and the other rows never touch it; only row 0's key and value are written
// and only its logits returned. Kept padded from start to end, a step pads and unpads once instead
// of around each of its 25 products (a fifth of a step's graph operations).
func (m *Model) step(scope *model.Scope, x, pos, future *Node, cache []*Node) (logits *Node, newCache []*Node) {
	cfg := m.cfg
	H, T, C, hs := cfg.NHead, cfg.BlockSize, cfg.NEmbd, cfg.HeadSize()
	if x.Shape().Dim(0) != 1 {
		panic(fmt.Errorf("gpt.Model.cachedForward: a step (S = 1) runs one sequence, got tokens of B = %d", x.Shape().Dim(0)))
	}
	g := x.Graph()
	future = Reshape(future, T)      // [T]: the same keys hidden from every row
	x = padRows(Reshape(x, 1, C), 0) // [R, C]
	R := x.Shape().Dim(0)
	zero := Const(g, int32(0))
	// write returns a block's cache `[1, H, T, hs]` with row 0 of y `[R, C]` (the token's key or
	// value) written at pos with DynamicUpdateSlice: a copy of one row into the donated buffer (see
	// decode; without donation the backend copies the whole cache first: 12 % of a step). The
	// token's C numbers are already in the cache's order, head by head.
	write := func(old, y *Node) *Node {
		row := Reshape(unpadRows(y, 0, 1), 1, H, 1, hs)
		return DynamicUpdateSlice(old, row, []*Node{zero, zero, pos, zero}) // [1, H, T, hs]
	}
	for l := range cfg.NLayer {
		h := fmt.Sprintf("/h/%d", l)
		prefix := h + "/attn"
		in := m.layerNorm(scope, h+"/ln_1", x)                                         // [R, C]
		q := Transpose(Reshape(m.dense(scope, prefix+"/W_query", in), R, H, hs), 0, 1) // [H, R, hs]
		keys := write(cache[2*l], m.dense(scope, prefix+"/W_key", in))                 // [1, H, T, hs]
		values := write(cache[2*l+1], m.dense(scope, prefix+"/W_value", in))           // [1, H, T, hs]
		newCache = append(newCache, keys, values)
		k, v := Reshape(keys, H, T, hs), Reshape(values, H, T, hs)
		var scores *Node // [H, R, T]: q · kᵀ
		if R > 1 {
			scores = DotGeneral(q, []int{2}, []int{0}, k, []int{2}, []int{0})
		} else { // as (k · qᵀ)ᵀ (see rowsTimesT)
			scores = Reshape(DotGeneral(k, []int{2}, []int{0}, q, []int{2}, []int{0}), H, 1, T)
		}
		scores = attention.MaskFill(scores, future, math.Inf(-1))                                       // keys after pos: -Inf
		scores = attention.ScaleScores(scores, hs)                                                      // / sqrt(hs)
		heads := DotGeneral(attention.StableSoftmax(scores), []int{2}, []int{0}, v, []int{1}, []int{0}) // [H, R, hs]
		merged := Reshape(Transpose(heads, 0, 1), R, C)                                                 // [R, C]
		x = Add(x, m.dense(scope, prefix+"/out_proj", merged))                                          // [R, C]
		y := m.dense(scope, h+"/mlp/c_fc", m.layerNorm(scope, h+"/ln_2", x))                            // [R, 4C]
		x = Add(x, m.dense(scope, h+"/mlp/c_proj", gelu(y)))                                            // [R, C]
	}
	x = m.layerNorm(scope, "/ln_f", x)                                     // [R, C]
	logits = rowsTimesT(x, weight(scope, g, "/wte/weight"))                // [R, V]: tied LM head
	return Reshape(unpadRows(logits, 0, 1), 1, 1, cfg.VocabSize), newCache // [1, 1, V]
}

// dense is m.linear through the backend's products (rowsTimesT) at every size. The course's
// attention.Linear sums products of up to 2^18 multiply-adds one by one in PyTorch's order, so
// that the seeds' small examples print PyTorch's digits; a step's products are that small (one
// token: 128×512 at most in notebook 10's model), and summed that way a step's products cost more
// than the whole window's through DotGeneral (measured: the cache was slower than no cache). The
// step's logits then differ from the full path's by float32 rounding (below 1e-6 in the tests),
// which does not change the drawn tokens. x is `[..., in]`; the result `[..., out]`.
func (m *Model) dense(scope *model.Scope, prefix string, x *Node) *Node {
	g := x.Graph()
	y := rowsTimesT(x, weight(scope, g, prefix+"/weight")) // [..., out]
	if !m.cfg.Bias {
		return y
	}
	return Add(y, ExpandLeftToRank(weight(scope, g, prefix+"/bias"), y.Rank())) // [..., out]
}

// rowsTimesT is x·wᵀ for a few rows x `[..., in]` and a weight w `[out, in]`; the result is
// `[..., out]`. A step of the cache multiplies one row (one token of one sequence), which reads
// every weight for a single multiply-add, and the pure-Go backend's small products handle that
// shape unevenly: its AVX2 kernels have a tile for one column, so w·xᵀ (transposed back) runs on
// them, while its AVX-512 kernels multiply four rows by four columns at a time and any rows or
// columns left over one scalar at a time, so there x·wᵀ runs with x padded to four rows (see
// padRows). Measured with BenchmarkGenerateBlock (notebook 10's model, a full block from a
// one-token prompt, 2 cores):
//   - Zen 5 (AVX-512): a block 18–21 ms padded, 21–24 ms as w times the broadcast row summed
//     over in, 35–37 ms as (w·xᵀ)ᵀ;
//   - Zen 3 (AVX2): a block 27–44 ms as (w·xᵀ)ᵀ, 47–66 ms broadcast, 105–112 ms as x·wᵀ; without
//     the cache 281–300 ms.
func rowsTimesT(x, w *Node) *Node {
	dims := x.Shape().Dimensions
	in, out := dims[len(dims)-1], w.Shape().Dim(0)
	n := x.Shape().Size() / in
	rows := x
	if x.Rank() != 2 {
		rows = Reshape(x, n, in)
	}
	var y *Node // [n, out], or [out, 1] for one row
	if fourRowTiles(x.Graph()) {
		y = unpadRows(DotGeneral(padRows(rows, 0), []int{1}, nil, w, []int{1}, nil), 0, n)
	} else {
		y = DotGeneral(w, []int{1}, nil, rows, []int{1}, nil) // [out, n]; one row's [out, 1] is laid out as [1, out]
		if n > 1 {
			y = Transpose(y, 0, 1)
		}
	}
	if x.Rank() == 2 && n > 1 {
		return y // [n, out]
	}
	return Reshape(y, append(slices.Clone(dims[:len(dims)-1]), out)...) // [..., out]
}

// fourRowTiles reports whether g runs on the pure-Go backend with its AVX-512 kernels, whose
// small products multiply tiles of four rows by four columns and leftovers one scalar at a time.
func fourRowTiles(g *Graph) bool { return backend.IsGo(g.Backend()) && backend.AVX512() }

// padRows pads x's axis (n rows on the left of a product) with zero rows to a multiple of four on
// that backend, so that every row of the product runs in its tiles; unpadRows keeps the first n
// rows of the product's result. Elsewhere both return their argument.
func padRows(x *Node, axis int) *Node {
	n := x.Shape().Dim(axis)
	if n%4 == 0 || !fourRowTiles(x.Graph()) {
		return x
	}
	pad := make([]compute.PadAxis, x.Rank())
	pad[axis].End = 4 - n%4
	return Pad(x, ScalarZero(x.Graph(), x.DType()), pad...)
}

func unpadRows(y *Node, axis, n int) *Node {
	if y.Shape().Dim(axis) == n {
		return y
	}
	return SliceAxis(y, axis, AxisRange(0, n))
}
