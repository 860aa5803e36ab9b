package gpt

import (
	"fmt"
	"math"
	"slices"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// exec returns the compiled inference graph called name, building it with fn on b (the model's
// backend, or generationBackend's) on first use and again after the weights changed (training,
// loading: see backend.Weights).
func (m *Model) exec(b compute.Backend, name string, fn any) (*model.Exec, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropStaleExecsLocked()
	if e, ok := m.execs[name]; ok {
		return e, nil
	}
	var e *model.Exec
	var err error
	switch f := fn.(type) {
	case func(*model.Scope, *Node) *Node:
		e, err = model.NewExec(b, m.store, f)
	case func(*model.Scope, *Node, *Node) *Node:
		e, err = model.NewExec(b, m.store, f)
	case func(*model.Scope, *Node) []*Node:
		e, err = model.NewExec(b, m.store, f)
	default:
		panic(fmt.Sprintf("gpt: exec %s: unsupported graph function %T", name, fn))
	}
	if err != nil {
		return nil, err
	}
	m.execs[name] = e
	return e, nil
}

// dropStaleExecsLocked forgets every compiled graph when the weights changed since they were
// compiled (they hold the weights as constants). m.mu must be held.
func (m *Model) dropStaleExecsLocked() {
	if w := backend.WeightsOf(m.store); !w.Same(m.execsWeights) {
		for _, e := range m.execs {
			e.Finalize()
		}
		clear(m.execs)
		m.execsWeights = w
	}
}

// generationBackend is where Generate's graphs run: backend.Serial of the model's backend. A
// token at a time, the products are too small to gain from the backend's worker pool.
func (m *Model) generationBackend() (compute.Backend, error) {
	b, err := backend.Serial(m.backend)
	if err != nil {
		return nil, fmt.Errorf("gpt.Model.Generate: %w", err)
	}
	return b, nil
}

func shapeOf(t *tensors.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}

// Logits runs the model (evaluation mode) on tokens `[B, T]`, T ≤ BlockSize, and returns the
// logits `[B, T, V]`. Every token must be an id of the vocabulary: an id outside [0, V) is an
// *ArgumentError naming its position, as PyTorch's embedding raises "index out of range".
func (m *Model) Logits(tokens *tensors.Tensor) (*tensors.Tensor, error) {
	if err := checkModel(m, "Model.Logits"); err != nil {
		return nil, err
	}
	if _, err := m.checkTokens("Model.Logits", "tokens", tokens); err != nil {
		return nil, err
	}
	return m.logits(m.backend, "logits", "gpt.Model.Logits", tokens)
}

// windowLogits is Logits of one window of checked token ids `[1, T]` for Generate, on
// generationBackend.
func (m *Model) windowLogits(window []int32) (*tensors.Tensor, error) {
	b, err := m.generationBackend()
	if err != nil {
		return nil, err
	}
	return m.logits(b, "generate", "gpt.Model.Generate", tensors.FromFlatDataAndDimensions(window, 1, len(window)))
}

// logits runs the graph called name (Forward's logits) on b; fn names the caller in errors.
func (m *Model) logits(b compute.Backend, name, fn string, tokens *tensors.Tensor) (*tensors.Tensor, error) {
	e, err := m.exec(b, name, func(scope *model.Scope, tokens *Node) *Node {
		logits, _ := m.Forward(scope, tokens)
		return logits
	})
	if err != nil {
		return nil, err
	}
	out, err := e.Call(tokens)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	return out[0], nil
}

// BatchLoss is the mean cross-entropy (evaluation mode) of the model on inputs x and targets y,
// both integer `[B, T]` of token ids (an id outside the vocabulary, in x or y, is an
// *ArgumentError: PyTorch raises "Target 50 is out of bounds").
func (m *Model) BatchLoss(x, y *tensors.Tensor) (float64, error) {
	const fn = "Model.BatchLoss"
	if err := checkModel(m, fn); err != nil {
		return 0, err
	}
	if _, err := m.checkTokens(fn, "x", x); err != nil {
		return 0, err
	}
	if y == nil || !slices.Equal(x.Shape().Dimensions, y.Shape().Dimensions) {
		return 0, argErr(fn, "y", "(the targets) must have the shape of x %s, got %v", x.Shape(), shapeOf(y))
	}
	if _, err := m.checkTokens(fn, "y", y); err != nil {
		return 0, err
	}
	e, err := m.exec(m.backend, "loss", func(scope *model.Scope, x, y *Node) *Node {
		logits, _ := m.Forward(scope, x)
		return Loss(logits, y)
	})
	if err != nil {
		return 0, err
	}
	out, err := e.Call(x, y)
	if err != nil {
		return 0, fmt.Errorf("gpt.Model.BatchLoss: %w", err)
	}
	return float64(tensors.ToScalar[float32](out[0])), nil
}

// SplitLoss is the mean next-token loss over all of ids: ids cut into consecutive windows of
// BlockSize tokens (a last, shorter window dropped), every position of every window predicted once
// — the whole split, not a random sample of batches. Windows go through the model 64 at a time.
func (m *Model) SplitLoss(ids []int32) (float64, error) {
	if err := checkModel(m, "Model.SplitLoss"); err != nil {
		return 0, err
	}
	if err := m.checkIDs("Model.SplitLoss", "ids", ids); err != nil {
		return 0, err
	}
	T := m.cfg.BlockSize
	n := (len(ids) - 1) / T
	if n == 0 {
		return 0, argErr("Model.SplitLoss", "ids", "has %d ids, which make no window of block_size %d tokens plus a target", len(ids), T)
	}
	const perBatch = 64
	total := 0.0
	for w := 0; w < n; w += perBatch {
		k := min(perBatch, n-w)
		x := tensors.FromFlatDataAndDimensions(slices.Clone(ids[w*T:(w+k)*T]), k, T)
		y := tensors.FromFlatDataAndDimensions(slices.Clone(ids[w*T+1:(w+k)*T+1]), k, T)
		loss, err := m.BatchLoss(x, y)
		if err != nil {
			return 0, fmt.Errorf("gpt.Model.SplitLoss: %w", err)
		}
		total += loss * float64(k)
	}
	return total / float64(n), nil
}

// AttentionWeights runs the model on one sequence of ids (1 ≤ len ≤ BlockSize) and returns each
// block's attention weights, `[H, T, T]` per layer: row i of head h is how much token i attends to
// each earlier token.
func (m *Model) AttentionWeights(ids []int32) ([]*tensors.Tensor, error) {
	if err := checkModel(m, "Model.AttentionWeights"); err != nil {
		return nil, err
	}
	if len(ids) < 1 || len(ids) > m.cfg.BlockSize {
		return nil, argErr("Model.AttentionWeights", "ids", "has %d tokens, want 1 to the model's block_size %d: use a shorter line", len(ids), m.cfg.BlockSize)
	}
	if err := m.checkIDs("Model.AttentionWeights", "ids", ids); err != nil {
		return nil, err
	}
	e, err := m.exec(m.backend, "weights", func(scope *model.Scope, tokens *Node) []*Node {
		_, ws := m.forward(scope, tokens, false) // the fused op returns no weights
		var outs []*Node
		for _, w := range ws {
			outs = append(outs, Squeeze(w, 0)) // [H, T, T]
		}
		return outs
	})
	if err != nil {
		return nil, err
	}
	out, err := e.Call(tensors.FromFlatDataAndDimensions(slices.Clone(ids), 1, len(ids)))
	if err != nil {
		return nil, fmt.Errorf("gpt.Model.AttentionWeights: %w", err)
	}
	return out, nil
}

// SampleOptions are Generate's settings.
type SampleOptions struct {
	Temperature float64 // logits are divided by it; 0 picks the most likely token (greedy)
	TopK        int     // only the TopK most likely tokens may be drawn (0: all)
	Seed        int64   // seed of the torchrand.Generator that draws the tokens
	KVCache     bool    // keep every block's keys and values between steps: same tokens, fewer multiply-adds (cache.go)
}

// Generate continues prompt by n tokens, nanoGPT's generate: each new token is drawn from the
// softmax of the last position's logits divided by Temperature, restricted to the TopK most
// likely, with a generator seeded by Seed, so the same seed gives the same text. The context is
// the last BlockSize tokens (longer prompts are cropped, as nanoGPT does). It returns the new
// tokens only. The draws use torchrand's uniforms, not torch.multinomial: the text is
// reproducible here, not equal to PyTorch's.
func (m *Model) Generate(prompt []int32, n int, opts SampleOptions) ([]int32, error) {
	if err := m.checkSample(prompt, n, opts); err != nil {
		return nil, err
	}
	if opts.KVCache {
		return m.generateCached(prompt, n, opts)
	}
	T, V := m.cfg.BlockSize, m.cfg.VocabSize
	g := torchrand.New(opts.Seed)
	ids := slices.Clone(prompt)
	window := make([]int32, T) // fixed [1, T] input: one compiled graph; causal attention ignores the padding after the context
	u := make([]float64, 1)
	probs := make([]float64, V)
	for range n {
		ctx := ids[max(0, len(ids)-T):]
		clear(window)
		copy(window, ctx)
		logits, err := m.windowLogits(window)
		if err != nil {
			return nil, err
		}
		row := tensors.MustCopyFlatData[float32](logits)[(len(ctx)-1)*V : len(ctx)*V]
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

func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// sample draws an index from softmax(row/temperature) restricted to the topK largest logits, with
// the uniform u in [0, 1).
func sample(row []float32, temperature float64, topK int, u float64, probs []float64) int {
	cut := math.Inf(-1)
	if topK > 0 && topK < len(row) {
		sorted := make([]float64, len(row))
		for i, v := range row {
			sorted[i] = float64(v)
		}
		slices.Sort(sorted)
		cut = sorted[len(sorted)-topK]
	}
	maxV := math.Inf(-1)
	for _, v := range row {
		maxV = math.Max(maxV, float64(v))
	}
	sum := 0.0
	for i, v := range row {
		if float64(v) < cut {
			probs[i] = 0
			continue
		}
		probs[i] = math.Exp((float64(v) - maxV) / temperature)
		sum += probs[i]
	}
	target := u * sum
	last := 0
	for i, p := range probs {
		if p == 0 {
			continue
		}
		last = i
		if target < p {
			return i
		}
		target -= p
	}
	return last
}
