package gpt

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/attnbook/attnbook/internal/customgrad"
	"github.com/attnbook/attnbook/pkg/attention"
	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/activation"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/nn"
)

// Model is a GPT: its Config, its weights (GoMLX variables in a model.Store, named by their
// nanoGPT state_dict keys: "wte.weight" is variable "/wte/weight", "h.0.attn.W_query.weight" is
// "/h/0/attn/W_query/weight") and the compiled graphs it runs for inference.
//
// A Model is safe for concurrent inference, but training (Train) must not overlap other calls.
type Model struct {
	cfg     Config
	store   *model.Store
	backend compute.Backend

	// Fused selects attention.FusedCausal (GoMLX's fused attention op, which its backends may
	// implement in one kernel) instead of the step-by-step graph functions. It gives the same
	// function (float32 rounding apart) and returns no attention weights.
	Fused bool

	mu           sync.Mutex
	execs        map[string]*model.Exec // inference graphs, compiled for execsWeights
	execsWeights backend.Weights        // see backend.Weights: they hold the weights as constants

	gen   *torchrand.Generator // New's generator, after the weights' draws (nil for a loaded model)
	saved *trainState          // the training state of the checkpoint Load read, if any (for Resume)
}

// New builds a GPT with the weights nanoGPT's GPT(config) gets after torch.manual_seed: it draws
// from g, in order,
//
//  1. what the modules draw while they are constructed: wte and wpe (nn.Embedding, normal(0, 1)),
//     then per block W_query, W_key, W_value, out_proj, c_fc, c_proj (nn.Linear: kaiming-uniform
//     weight, uniform bias), then lm_head — all overwritten below;
//  2. model.apply(_init_weights), children before parents: wte, wpe, every block's Linear weights
//     normal(0, 0.02), lm_head normal(0, 0.02) — lm_head is tied to wte, so this draw is wte's
//     final value; biases zero, LayerNorm weights one;
//  3. normal(0, 0.02/√(2L)) for every out_proj.weight and c_proj.weight, block by block.
//
// The model keeps g: a trainer with TrainConfig.NanoGPTDraws continues its stream, as nanoGPT's
// batches continue torch's global generator. The model runs on pkg/backend's default backend.
func New(cfg Config, g *torchrand.Generator) (*Model, error) {
	if err := cfg.check("New", "cfg."); err != nil {
		return nil, err
	}
	if g == nil {
		return nil, argErr("New", "g", "must be a *torchrand.Generator (torchrand.New(seed)), got nil")
	}
	b, err := backend.Default()
	if err != nil {
		return nil, fmt.Errorf("gpt.New: %w", err)
	}
	m := newModel(cfg, model.NewStore(), b)
	m.gen = g
	values := initialWeights(cfg, g)
	for _, p := range cfg.params() {
		m.store.VariableWithValue("/"+strings.ReplaceAll(p.key, ".", "/"), tensors.FromFlatDataAndDimensions(values[p.key], p.dims...))
	}
	return m, nil
}

func newModel(cfg Config, store *model.Store, b compute.Backend) *Model {
	return &Model{cfg: cfg, store: store, backend: b, execs: map[string]*model.Exec{}}
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Store is the GoMLX store holding the weights (and, after training, the optimizer's state).
func (m *Model) Store() *model.Store { return m.store }

// param is one learnable tensor: its state_dict key and shape.
type param struct {
	key  string
	dims []int
}

// params lists the parameters in PyTorch's named_parameters() order (the tied lm_head.weight is
// wte.weight and is not listed again).
func (c Config) params() []param {
	C, V := c.NEmbd, c.VocabSize
	ps := []param{{"wte.weight", []int{V, C}}, {"wpe.weight", []int{c.BlockSize, C}}}
	ln := func(name string) {
		ps = append(ps, param{name + ".weight", []int{C}})
		if c.Bias {
			ps = append(ps, param{name + ".bias", []int{C}})
		}
	}
	linear := func(name string, in, out int) {
		ps = append(ps, param{name + ".weight", []int{out, in}})
		if c.Bias {
			ps = append(ps, param{name + ".bias", []int{out}})
		}
	}
	for l := range c.NLayer {
		h := fmt.Sprintf("h.%d.", l)
		ln(h + "ln_1")
		for _, w := range []string{"W_query", "W_key", "W_value", "out_proj"} {
			linear(h+"attn."+w, C, C)
		}
		ln(h + "ln_2")
		linear(h+"mlp.c_fc", C, 4*C)
		linear(h+"mlp.c_proj", 4*C, C)
	}
	ln("ln_f")
	return ps
}

// paramTensors is len(c.params()), without listing them.
func (c Config) paramTensors() int {
	perLN, perLinear := 1, 1
	if c.Bias {
		perLN, perLinear = 2, 2
	}
	return 2 + c.NLayer*(2*perLN+6*perLinear) + perLN
}

// initialWeights draws the parameters as New documents, returning flat values by key.
func initialWeights(cfg Config, g *torchrand.Generator) map[string][]float32 {
	C, V, T, L := cfg.NEmbd, cfg.VocabSize, cfg.BlockSize, cfg.NLayer
	linears := func(yield func(name string, in, out int)) {
		for l := range L {
			h := fmt.Sprintf("h.%d.", l)
			for _, w := range []string{"W_query", "W_key", "W_value", "out_proj"} {
				yield(h+"attn."+w, C, C)
			}
			yield(h+"mlp.c_fc", C, 4*C)
			yield(h+"mlp.c_proj", 4*C, C)
		}
	}
	normal := func(n int, std float64) []float32 {
		v := make([]float32, n)
		g.Normal(v, 0, std)
		return v
	}
	// 1. Construction draws, all overwritten later.
	normal(V*C, 1) // wte = nn.Embedding(V, C)
	normal(T*C, 1) // wpe = nn.Embedding(T, C)
	linears(func(_ string, in, out int) { g.Linear(in, out, cfg.Bias) })
	g.Linear(C, V, false) // lm_head
	// 2. _init_weights, post-order: wte, wpe, blocks, lm_head (= wte, tied).
	w := map[string][]float32{}
	normal(V*C, 0.02) // wte, before lm_head's draw replaces the shared tensor
	w["wpe.weight"] = normal(T*C, 0.02)
	linears(func(name string, in, out int) {
		w[name+".weight"] = normal(in*out, 0.02)
		if cfg.Bias {
			w[name+".bias"] = make([]float32, out)
		}
	})
	w["wte.weight"] = normal(V*C, 0.02)
	// 3. Residual projections, scaled for depth (GPT-2).
	std := 0.02 / math.Sqrt(2*float64(L))
	for l := range L {
		w[fmt.Sprintf("h.%d.attn.out_proj.weight", l)] = normal(C*C, std)
		w[fmt.Sprintf("h.%d.mlp.c_proj.weight", l)] = normal(4*C*C, std)
	}
	for _, name := range append(layerNormNames(L), "ln_f") {
		ones := make([]float32, C)
		for i := range ones {
			ones[i] = 1
		}
		w[name+".weight"] = ones
		if cfg.Bias {
			w[name+".bias"] = make([]float32, C)
		}
	}
	return w
}

func layerNormNames(nLayer int) []string {
	var names []string
	for l := range nLayer {
		names = append(names, fmt.Sprintf("h.%d.ln_1", l), fmt.Sprintf("h.%d.ln_2", l))
	}
	return names
}

// StateDict returns copies of the parameters by nanoGPT state_dict key (lm_head.weight omitted:
// it is wte.weight), in PyTorch's layout.
func (m *Model) StateDict() map[string]*tensors.Tensor {
	sd := map[string]*tensors.Tensor{}
	for _, p := range m.cfg.params() {
		v := m.store.GetVariable("/" + strings.ReplaceAll(p.key, ".", "/"))
		c, err := v.MustValue().LocalClone()
		if err != nil {
			panic(err)
		}
		sd[p.key] = c
	}
	return sd
}

// ParamNames lists the parameter keys in PyTorch's named_parameters() order.
func (m *Model) ParamNames() []string {
	var names []string
	for _, p := range m.cfg.params() {
		names = append(names, p.key)
	}
	return names
}

// NumParams is the number of learnable scalars (Config.NumParams).
func (m *Model) NumParams() int { return m.cfg.NumParams() }

// weight returns the variable's value node in scope's graph.
func weight(scope *model.Scope, g *Graph, path string) *Node {
	v := scope.Store().GetVariable(path)
	if v == nil {
		panic(fmt.Errorf("gpt: variable %s missing from the model store", path))
	}
	return v.NodeValue(g)
}

// linear is attention.Linear with the weight (and bias) at prefix: x `[..., in]` → `[..., out]`.
func (m *Model) linear(scope *model.Scope, prefix string, x *Node) *Node {
	g := x.Graph()
	var bias *Node
	if m.cfg.Bias {
		bias = weight(scope, g, prefix+"/bias")
	}
	return attention.Linear(x, weight(scope, g, prefix+"/weight"), bias)
}

// layerNorm is nn.LayerNorm over the last axis (eps 1e-5) with the weight (and bias) at prefix:
// GoMLX's nn.LayerNorm, a fused op; a training graph takes PyTorch's gradient (layerNormGradients).
func (m *Model) layerNorm(scope *model.Scope, prefix string, x *Node) *Node {
	g := x.Graph()
	params := []*Node{weight(scope, g, prefix+"/weight")}
	if m.cfg.Bias {
		params = append(params, weight(scope, g, prefix+"/bias"))
	}
	norm := func(in ...*Node) *Node {
		var bias *Node
		if len(in) == 3 {
			bias = in[2]
		}
		return nn.LayerNorm(in[0], []int{-1}, layerNormEps, in[1], bias, nil)
	}
	if !scope.IsTraining(g) {
		return norm(append([]*Node{x}, params...)...)
	}
	return customgrad.With(norm, func(dy *Node) []*Node { return layerNormGradients(x, params[0], dy, m.cfg.Bias) }, append([]*Node{x}, params...)...)
}

// layerNormEps is nn.LayerNorm's default eps, nanoGPT's.
const layerNormEps = 1e-5

// layerNormGradients is PyTorch's LayerNormBackward (its CPU kernel's formula) for x `[..., C]`
// normalized over C with weight w `[C]` and the cotangent dy `[..., C]`: with the rows' mean μ and
// rstd = 1/√(var + eps), ds = Σ dy·w·x and db = Σ dy·w over C,
// dx = rstd·dy·w + b·x + c where b = (db·μ − ds)·rstd³/C and c = −b·μ − db·rstd/C;
// dw = Σ dy·(x − μ)·rstd and the bias's db = Σ dy over the rows. It returns dx, dw and, with a
// bias, the bias's gradient: ten passes over `[..., C]`, where differentiating GoMLX's formula
// (nn.LayerNorm's alternate to its fused op) costs nineteen.
func layerNormGradients(x, w, dy *Node, bias bool) []*Node {
	rank, c := x.Rank(), float64(x.Shape().Dim(-1))
	rows := make([]int, rank-1) // every axis but C
	for i := range rows {
		rows[i] = i
	}
	wx := ExpandLeftToRank(w, rank)                                                   // [1..., C]
	mean := ReduceAndKeep(x, ReduceMean, -1)                                          // [..., 1]
	xc := Sub(x, mean)                                                                // [..., C]
	rstd := Rsqrt(AddScalar(ReduceAndKeep(Square(xc), ReduceMean, -1), layerNormEps)) // [..., 1]
	dyw := Mul(dy, wx)                                                                // [..., C]
	ds := ReduceAndKeep(Mul(dyw, x), ReduceSum, -1)                                   // [..., 1]
	db := ReduceAndKeep(dyw, ReduceSum, -1)                                           // [..., 1]
	b := MulScalar(Mul(Mul(Mul(Sub(Mul(db, mean), ds), rstd), rstd), rstd), 1/c)      // [..., 1]
	cc := Sub(Neg(Mul(b, mean)), MulScalar(Mul(db, rstd), 1/c))                       // [..., 1]
	dx := Add(Add(Mul(dyw, rstd), Mul(x, b)), cc)                                     // [..., C]
	grads := []*Node{dx, ReduceSum(Mul(dy, Mul(xc, rstd)), rows...)}
	if bias {
		grads = append(grads, ReduceSum(dy, rows...))
	}
	return grads
}

// Forward builds the model on tokens `[B, T]` (any integer dtype, T ≤ BlockSize) and returns the
// logits `[B, T, V]` and, unless Fused is set, each block's attention weights `[B, H, T, T]`
// (after the softmax, before dropout). Dropout is applied when scope's store is training.
// It panics with an *ArgumentError naming the shapes if tokens is not an integer `[B, T]` with
// 1 ≤ T ≤ BlockSize. A graph cannot check the token values: ids outside the vocabulary are
// clamped by the embedding's gather; Logits and BatchLoss check them before building.
func (m *Model) Forward(scope *model.Scope, tokens *Node) (logits *Node, weights []*Node) {
	return m.forward(scope, tokens, m.Fused)
}

func (m *Model) forward(scope *model.Scope, tokens *Node, fused bool) (logits *Node, weights []*Node) {
	if m == nil {
		argPanic("Model.Forward", "m", "is nil: make the model with gpt.New or gpt.Load (and check their error)")
	}
	cfg := m.cfg
	if tokens == nil {
		argPanic("Model.Forward", "tokens", "must be an integer [B, T] node, got nil")
	}
	m.checkGraphTokens("Model.Forward", tokens.Rank(), tokens.DType(), tokens.Shape().Dimensions, tokens.Shape())
	B, T, C := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1], cfg.NEmbd
	g := tokens.Graph()
	if scope == nil {
		scope = m.store.RootScope()
	}
	// The residual stream is kept as rows `[B·T, C]`, one per token: the Linears multiply rows, and
	// a `[B, T, C]` operand would be reshaped first, which GoMLX's pure-Go backend does by copying
	// when the tensor has other uses (a layer norm's output feeds three Linears, GELU's output its
	// gradient too).
	dropout := func(x *Node) *Node { return layers.DropoutStatic(scope, x, cfg.Dropout) }
	tok := Gather(weight(scope, g, "/wte/weight"), ExpandAxes(ConvertDType(tokens, dtypes.Int32), -1)) // [B, T, C]
	pos := Slice(weight(scope, g, "/wpe/weight"), AxisRange(0, T))                                     // [T, C]
	x := dropout(Reshape(Add(tok, ExpandAxes(pos, 0)), B*T, C))                                        // [B·T, C]
	for l := range cfg.NLayer {
		h := fmt.Sprintf("/h/%d", l)
		a, w := m.attention(scope, h+"/attn", m.layerNorm(scope, h+"/ln_1", x), B, fused) // [B·T, C]
		weights = append(weights, w)
		x = Add(x, dropout(a))
		y := m.linear(scope, h+"/mlp/c_fc", m.layerNorm(scope, h+"/ln_2", x)) // [B·T, 4C]
		y = m.linear(scope, h+"/mlp/c_proj", gelu(y))                         // [B·T, C]
		x = Add(x, dropout(y))
	}
	x = m.layerNorm(scope, "/ln_f", x)                                                    // [B·T, C]
	logits = Reshape(attention.Linear(x, weight(scope, g, "/wte/weight"), nil), B, T, -1) // [B, T, V]: tied LM head
	if fused {
		weights = nil
	}
	return logits, weights
}

// gelu is the exact GELU of nn.GELU(), x·Φ(x) with Φ(x) = (1 + erf(x/√2))/2, on x of any shape:
// GoMLX's activation.Gelu, one fused op (PyTorch's order of operations, 0.5·x·(1 + erf(x/√2))). Its
// gradient, where the backend has the fused op's VJP (GoMLX's pure-Go backend does), is one more
// pass computing PyTorch's GeluBackward, dy·(Φ(x) + x·φ(x)) with φ(x) = e^(−x²/2)/√(2π), where
// writing it with graph ops took seven passes over the MLP's `[B·T, 4C]` and the forward five.
func gelu(x *Node) *Node { return activation.Gelu(x) }

// attention is the course's causal multi-head attention (seed 001/004's MultiHeadAttention) on x
// `[B·T, C]` (the rows of B sequences), with its weights at prefix: it returns the output `[B·T, C]`
// and the attention weights `[B, H, T, T]` (nil when Fused).
func (m *Model) attention(scope *model.Scope, prefix string, x *Node, B int, fused bool) (out, weights *Node) {
	H, hs, C := m.cfg.NHead, m.cfg.HeadSize(), m.cfg.NEmbd
	T := x.Shape().Dim(0) / B
	project := func(name string) *Node { // [B, H, T, hs]
		return attention.SplitHeads(Reshape(m.linear(scope, prefix+name, x), B, T, C), H)
	}
	keys, queries, values := project("/W_key"), project("/W_query"), project("/W_value")
	var heads *Node
	if fused {
		heads = attention.FusedCausal(queries, keys, values) // [B, H, T, hs]
	} else {
		scores := attention.Scores(queries, keys)  // [B, H, T, T]
		scores = attention.CausalMaskFill(scores)  // future keys: -Inf
		scores = attention.ScaleScores(scores, hs) // / sqrt(hs)
		weights = attention.StableSoftmax(scores)  // [B, H, T, T], rows sum to 1
		dropped := layers.DropoutStatic(scope, weights, m.cfg.Dropout)
		heads = attention.ContextVectors(dropped, values) // [B, H, T, hs]
	}
	merged := Reshape(attention.MergeHeads(heads), B*T, C)      // [B·T, C]
	return m.linear(scope, prefix+"/out_proj", merged), weights // [B·T, C]
}

// Loss is the mean cross-entropy of logits `[B, T, V]` against the next tokens targets `[B, T]`
// (F.cross_entropy(logits.view(-1, V), targets.view(-1))), through GoMLX's
// loss.SparseCategoricalCrossEntropyLogits. It returns a scalar. It panics with an
// *ArgumentError unless logits is a float `[B, T, V]` and targets an integer `[B, T]` (target
// values cannot be checked in a graph: BatchLoss checks them before building).
func Loss(logits, targets *Node) *Node {
	switch {
	case logits == nil || logits.Rank() != 3 || !logits.DType().IsFloat():
		argPanic("Loss", "logits", "must be a float [B, T, V] node, got %s", nodeShape(logits))
	case targets == nil || targets.Rank() != 2 || !targets.DType().IsInt():
		argPanic("Loss", "targets", "must be an integer [B, T] node, got %s", nodeShape(targets))
	case !slices.Equal(logits.Shape().Dimensions[:2], targets.Shape().Dimensions):
		argPanic("Loss", "targets", "shape %s must be logits' [B, T] = %v", targets.Shape(), logits.Shape().Dimensions[:2])
	}
	return ReduceAllMean(crossEntropy(logits, targets))
}

func nodeShape(n *Node) any {
	if n == nil {
		return "nil"
	}
	return n.Shape()
}
