package attention

import (
	"fmt"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Config mirrors seed 003's config dict, the hyperparameters of its GPT model; its JSON keys are
// the dict's.
type Config struct {
	VocabularySize int     `json:"vocabulary_size"` // tokens the model knows (65 characters)
	ContextSize    int     `json:"context_size"`    // the most tokens one input may have
	EmbeddingDim   int     `json:"embedding_dim"`   // width of the token embeddings
	HeadsNum       int     `json:"heads_num"`       // attention heads per layer
	LayersNum      int     `json:"layers_num"`      // transformer blocks (not used by attention)
	DropoutRate    float64 `json:"dropout_rate"`    // dropout probability p
	UseBias        bool    `json:"use_bias"`        // bias in the query, key and value projections
	HeadSize       int     `json:"head_size"`       // width of each head; 0 means EmbeddingDim / HeadsNum
}

// ShakespeareConfig is seed 003's configuration for the tiny-shakespeare character model:
// 65 characters, 256 tokens, 768-wide embeddings, 12 heads of 64, 10 layers, dropout 0.1, no
// bias.
func ShakespeareConfig() Config {
	return Config{VocabularySize: 65, ContextSize: 256, EmbeddingDim: 768, HeadsNum: 12,
		LayersNum: 10, DropoutRate: 0.1, UseBias: false, HeadSize: 64}
}

// headSize is HeadSize, or EmbeddingDim / HeadsNum (the seed's //) when it is 0.
func (c Config) headSize() int {
	if c.HeadSize == 0 && c.HeadsNum > 0 {
		return c.EmbeddingDim / c.HeadsNum
	}
	return c.HeadSize
}

// check panics with an *ArgumentError naming the first bad field.
func (c Config) check(fn string, needHeads bool) {
	checkPositive(fn, []string{"cfg.ContextSize", "cfg.EmbeddingDim", "cfg.HeadSize"},
		c.ContextSize, c.EmbeddingDim, c.headSize())
	if needHeads {
		checkPositive(fn, []string{"cfg.HeadsNum"}, c.HeadsNum)
		if c.HeadsNum*c.headSize() != c.EmbeddingDim {
			argPanic(fn, "cfg", "HeadsNum·HeadSize = %d·%d must equal EmbeddingDim (%d): the heads' outputs are concatenated into the linear layer's input",
				c.HeadsNum, c.headSize(), c.EmbeddingDim)
		}
	}
}

// Head is seed 003's AttentionHead: one causal self-attention head built from a Config. Its
// Linear projections are Q_weights, K_weights and V_weights (embedding_dim → head_size, bias
// use_bias); the mask is tril(ones(context_size)) == 0 filled with -Inf, then the scores are
// divided by sqrt(head_size), softmaxed and dropped out.
//
// Input `[B, T, embedding_dim]` with T <= context_size; output `[B, T, head_size]`; weights
// `[B, T, T]`. Parameters: "Q_weights.weight", ("Q_weights.bias"), "K_weights.weight", ….
type Head struct {
	Module
	cfg Config
}

// NewHead draws Q_weights, K_weights and V_weights from g in this order, as
// AttentionHead(config) does. In training mode a call draws one `[B, T, T]` mask.
func NewHead(g *torchrand.Generator, cfg Config) *Head {
	cfg.check("NewHead", false)
	m := &Head{Module: newModule("Head", g, cfg.DropoutRate), cfg: cfg}
	m.addConfigHead("", cfg)
	m.maskDims = func(d [][]int) [][]int { return [][]int{{d[0][0], d[0][1], d[0][1]}} }
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		data, masks := m.splitInputs(in)
		return m.ApplyWithMasks(scope, data[0], masks...)
	}
	return m
}

// Apply builds the forward pass on x `[B, T, embedding_dim]` and returns `[B, T, head_size]`;
// variables and dropout as in [CausalAttention.Apply].
func (m *Head) Apply(scope *model.Scope, x *Node) *Node {
	out, _, _ := m.ApplyWithMasks(scope, x, m.rngMasks(scope, []*Node{x})...)
	return out
}

// ApplyWithMasks is Apply with the `[B, T, T]` dropout mask given (or none); it returns the
// output and the weights `[B, T, T]` before and after dropout.
func (m *Head) ApplyWithMasks(scope *model.Scope, x *Node, masks ...*Node) (output, weights, dropped *Node) {
	const fn = "Head.Apply"
	checkRank(fn, "x", x, 3)
	checkTokens(fn, x.Shape().Dimensions, m.cfg.EmbeddingDim, m.cfg.ContextSize, 3)
	m.checkMasks(fn, []*Node{x}, masks)
	var mask *Node
	if len(masks) > 0 {
		mask = masks[0]
	}
	return m.configHead(scope, "", x, mask)
}

// Forward runs the head on x `[B, T, embedding_dim]` as one compiled graph and returns
// `[B, T, head_size]`; it panics with the error Call returns.
func (m *Head) Forward(x *tensors.Tensor) *tensors.Tensor { return mustCall(m.Call(x)) }

// Call is Forward returning bad input as an error.
func (m *Head) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) { checkTokens("Head.Call", d[0], m.cfg.EmbeddingDim, m.cfg.ContextSize, 3) }, x)
}

// HeadList is seed 003's MultiHeadAttention: a list of heads_num [Head]s run side by side, their
// outputs concatenated, mixed by a Linear layer (embedding_dim → embedding_dim, with bias) and
// dropped out — dropout on the output here, besides the one inside every head.
//
// Input `[B, T, embedding_dim]`; output `[B, T, embedding_dim]`; weights `[B, H, T, T]`.
// Parameters: "heads.0.Q_weights.weight", …, "heads.11.V_weights.weight", "linear.weight",
// "linear.bias". With [ShakespeareConfig] it has 2,360,064, as the vectorized
// MultiHeadAttention(768, 768, ·, ·, 12).
type HeadList struct {
	Module
	cfg Config
}

// NewHeadList draws heads_num heads and then the linear layer from g, as seed 003's
// MultiHeadAttention(config). It panics with an *ArgumentError unless
// HeadsNum·HeadSize == EmbeddingDim. In training mode a call draws one `[B, T, T]` mask per
// head, head by head, then a `[B, T, embedding_dim]` mask for the output.
func NewHeadList(g *torchrand.Generator, cfg Config) *HeadList {
	cfg.check("NewHeadList", true)
	m := &HeadList{Module: newModule("HeadList", g, cfg.DropoutRate), cfg: cfg}
	for h := range cfg.HeadsNum {
		m.addConfigHead(fmt.Sprintf("heads.%d.", h), cfg)
	}
	m.addLinear("linear", cfg.EmbeddingDim, cfg.EmbeddingDim, true)
	m.maskDims = func(d [][]int) [][]int {
		b, t := d[0][0], d[0][1]
		dims := make([][]int, 0, cfg.HeadsNum+1)
		for range cfg.HeadsNum {
			dims = append(dims, []int{b, t, t})
		}
		return append(dims, []int{b, t, cfg.EmbeddingDim})
	}
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		data, masks := m.splitInputs(in)
		return m.ApplyWithMasks(scope, data[0], masks...)
	}
	return m
}

// Apply builds the forward pass on x `[B, T, embedding_dim]` and returns
// `[B, T, embedding_dim]`; variables and dropout as in [CausalAttention.Apply].
func (m *HeadList) Apply(scope *model.Scope, x *Node) *Node {
	out, _, _ := m.ApplyWithMasks(scope, x, m.rngMasks(scope, []*Node{x})...)
	return out
}

// ApplyWithMasks is Apply with the dropout masks given (or none): heads_num `[B, T, T]` masks,
// then one `[B, T, embedding_dim]` for the output. It returns the output and the heads'
// weights `[B, H, T, T]` before and after dropout.
func (m *HeadList) ApplyWithMasks(scope *model.Scope, x *Node, masks ...*Node) (output, weights, dropped *Node) {
	const fn = "HeadList.Apply"
	checkRank(fn, "x", x, 3)
	checkTokens(fn, x.Shape().Dimensions, m.cfg.EmbeddingDim, m.cfg.ContextSize, 3)
	m.checkMasks(fn, []*Node{x}, masks)
	h := m.cfg.HeadsNum
	outs, ws, ds := make([]*Node, h), make([]*Node, h), make([]*Node, h)
	for i := range h {
		var mask *Node
		if len(masks) > 0 {
			mask = masks[i]
		}
		outs[i], ws[i], ds[i] = m.configHead(scope, fmt.Sprintf("heads.%d.", i), x, mask) // [B, T, hs], [B, T, T]
	}
	concat := Concatenate(outs, -1)            // [B, T, H·hs]
	output = m.linear(scope, "linear", concat) // [B, T, E]
	weights = Stack(ws, 1)                     // [B, H, T, T]
	dropped = weights
	if len(masks) > 0 {
		dropped = Stack(ds, 1)             // [B, H, T, T]
		output = Dropout(output, masks[h]) // [B, T, E]
	}
	return output, weights, dropped
}

// Forward runs the module on x `[B, T, embedding_dim]` as one compiled graph and returns
// `[B, T, embedding_dim]`; it panics with the error Call returns.
func (m *HeadList) Forward(x *tensors.Tensor) *tensors.Tensor { return mustCall(m.Call(x)) }

// Call is Forward returning bad input as an error.
func (m *HeadList) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) { checkTokens("HeadList.Call", d[0], m.cfg.EmbeddingDim, m.cfg.ContextSize, 3) }, x)
}

// addConfigHead registers the Q_weights, K_weights and V_weights layers of one Head.
func (m *Module) addConfigHead(prefix string, cfg Config) {
	for _, k := range []string{"Q_weights", "K_weights", "V_weights"} {
		m.addLinear(prefix+k, cfg.EmbeddingDim, cfg.headSize(), cfg.UseBias)
	}
}

// configHead is the forward pass of one seed-003 head with parameters under prefix:
// `[B, T, E]` → `[B, T, hs]`, weights `[B, T, T]`.
func (m *Module) configHead(scope *model.Scope, prefix string, x, mask *Node) (output, weights, dropped *Node) {
	queries := m.linear(scope, prefix+"Q_weights", x) // [B, T, hs]
	keys := m.linear(scope, prefix+"K_weights", x)    // [B, T, hs]
	values := m.linear(scope, prefix+"V_weights", x)  // [B, T, hs]
	return ScaledDotProduct(queries, keys, values).Causal(true).DropoutMask(mask).DoneWithDropped()
}
