package attention

import (
	"math"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// FusedCausal is causal scaled dot-product attention, softmax(q @ k.T / sqrt(hd) + causal
// mask) @ v, through GoMLX's fused attention op (v0.27+: graph.BackendFusedScaledDotProductAttention,
// called by ml/layers/attention.Core): the backend computes it in one op where it has one (XLA
// on CUDA: cuDNN flash attention, forward and backward, without materializing the `[B, H, T, T]`
// scores); elsewhere GoMLX falls back to its own decomposed graph, which autodiff differentiates.
// GoMLX v0.28.16's pure-Go backend ("go", compute v0.1.14) has a fused kernel for the forward
// pass (sdpaFloat32AVX512Dim64 and its AVX2 twin); gradients go through the decomposed graph.
//
// q, k and v are `[B, H, T, hd]` (the layout [SplitHeads] gives) of the same float dtype; the
// result is `[B, H, T, hd]`. Query i sees keys 0…i. No attention weights are returned and no
// dropout is applied: it is the evaluation-mode attention of a causal module. A shape mismatch
// panics with an *ArgumentError naming the shapes.
//
// Its float32 results differ from [ScaledDotProduct]'s (PyTorch's operation order) in the last
// bits: GoMLX multiplies the scores by 1/sqrt(hd) instead of dividing them by sqrt(hd) (within
// 1e-7 of PyTorch at the seeds' sizes, 2e-7 of the exact graph at 1×1024×768×12). On the go
// backend it is a formulation to compare, not a default: its fused kernel took about 19× the time
// of the decomposed graph on an Intel Xeon (AVX-512, 2026-11-25), and 0.11 CPU-s against the
// default graph's 0.12 in MultiHeadAttention at 1×1024×768×12 on an AMD EPYC Zen 4 (AVX-512,
// BenchmarkMultiHeadAttention; machine loaded by other work).
func FusedCausal(q, k, v *Node) *Node {
	const fn = "FusedCausal"
	checkRank(fn, "q", q, 4)
	checkRank(fn, "k", k, 4)
	checkRank(fn, "v", v, 4)
	checkFloat(fn, "q", q)
	if !k.Shape().Equal(q.Shape()) {
		argPanic(fn, "k", "shape %s must equal q shape %s, `[B, H, T, hd]`", k.Shape(), q.Shape())
	}
	if !v.Shape().Equal(q.Shape()) {
		argPanic(fn, "v", "shape %s must equal q shape %s, `[B, H, T, hd]`", v.Shape(), q.Shape())
	}
	return fusedCausal(q, k, v)
}

// fusedCausal is what GoMLX's ml/layers/attention.Core does for causal `[B, H, T, hd]` inputs
// with no mask, bias, dropout or grouped heads, written here so that a program using this
// package does not link GoMLX's layers and training packages: the backend's fused op where it
// has one, GoMLX's decomposed graph (scores times 1/sqrt(hd), masked softmax) otherwise and
// for the gradient where the backend has no fused gradient. TestFusedCausalIsGoMLXCore holds
// it to Core, forward and backward, bit for bit.
func fusedCausal(q, k, v *Node) *Node {
	g, t := q.Graph(), q.Shape().Dim(2)
	decomposed := func() *Node {
		scores := MulScalar(Einsum("bhqd,bhkd->bhqk", q, k), 1/math.Sqrt(float64(q.Shape().Dim(-1)))) // [B, H, T, T]
		causal := Reshape(LowerTriangular(g, t), 1, 1, t, t)                                          // [1, 1, T, T]
		return Einsum("bhqk,bhkd->bhqd", MaskedSoftmax(scores, causal, -1), v)                        // [B, H, T, hd]
	}
	ops := g.Backend().Capabilities().Operations
	if !ops[compute.OpTypeFusedScaledDotProductAttention] {
		return decomposed()
	}
	out, _ := InternalFusedOpCaller(func() *Node {
		out, _ := BackendFusedScaledDotProductAttention(q, k, v, compute.AttentionAxesLayoutBHSD,
			&compute.ScaledDotProductAttentionConfig{Causal: true})
		return out
	}, decomposed, !ops[compute.OpTypeFusedScaledDotProductAttentionVJP])
	return out
}
