package attention

import (
	"math"

	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// ScaledDotProductBuilder configures one scaled dot-product attention; create it with
// [ScaledDotProduct], set options, then call Done or DoneWithDropped.
type ScaledDotProductBuilder struct {
	q, k, v      *Node
	causal       bool
	fillMask     *Node
	keyMask      *Node
	dropoutMask  *Node
	scaleQueries bool
}

// ScaledDotProduct is the attention of Vaswani et al. 2017 ("Attention Is All You Need",
// https://arxiv.org/abs/1706.03762, eq. 1), softmax(q @ k.T / sqrt(dk)) @ v, for self attention
// (q, k and v from the same tokens) and cross attention (Tq != Tk: queries from one sequence,
// keys and values from another, as in seed 002).
//
// Shapes: q `[..., Tq, dk]`, k `[..., Tk, dk]`, v `[..., Tk, dv]`, with the same leading axes
// (usually `[B, H]` after [SplitHeads], or `[B]`). Done returns the output `[..., Tq, dv]` and
// the attention weights `[..., Tq, Tk]`, each row summing to 1.
//
// The steps, in PyTorch's order: scores = q @ k.T; masks fill scores with -Inf; scores /
// sqrt(dk); weights = softmax over keys; dropout (if a mask is given); output = weights @ v.
// A mismatch of shapes (keys and values of different lengths, say) panics with an
// *ArgumentError naming them.
func ScaledDotProduct(q, k, v *Node) *ScaledDotProductBuilder {
	const fn = "ScaledDotProduct"
	checkFloat(fn, "q", q)
	checkFloat(fn, "k", k)
	checkFloat(fn, "v", v)
	r := q.Rank()
	if r < 2 {
		argPanic(fn, "q", "shape %s: rank must be >= 2, `[..., Tq, dk]`", q.Shape())
	}
	if k.Rank() != r || v.Rank() != r {
		argPanic(fn, "k, v", "shapes %s and %s must have q's rank %d (q shape %s)", k.Shape(), v.Shape(), r, q.Shape())
	}
	qd, kd, vd := q.Shape().Dimensions, k.Shape().Dimensions, v.Shape().Dimensions
	if !dimsEqual(qd[:r-2], kd[:r-2]) || !dimsEqual(qd[:r-2], vd[:r-2]) {
		argPanic(fn, "k, v", "leading axes of shapes %s and %s do not match q shape %s", k.Shape(), v.Shape(), q.Shape())
	}
	if kd[r-1] != qd[r-1] {
		argPanic(fn, "k", "shape %s: key width %d does not match query width %d (q shape %s)", k.Shape(), kd[r-1], qd[r-1], q.Shape())
	}
	if kd[r-2] != vd[r-2] {
		argPanic(fn, "v", "shape %s: Tk=%d values but k shape %s has Tk=%d keys", v.Shape(), vd[r-2], k.Shape(), kd[r-2])
	}
	if k.DType() != q.DType() || v.DType() != q.DType() {
		argPanic(fn, "k, v", "dtypes of shapes %s, %s must match q shape %s", k.Shape(), v.Shape(), q.Shape())
	}
	return &ScaledDotProductBuilder{q: q, k: k, v: v}
}

// Causal hides future keys (key j > query i) with [CausalMaskFill]. Default false.
func (b *ScaledDotProductBuilder) Causal(causal bool) *ScaledDotProductBuilder {
	b.causal = causal
	return b
}

// FillMask sets a boolean mask with PyTorch's masked_fill meaning: true where the score is
// replaced by -Inf. Its shape is the last axes of the scores, `[Tq, Tk]` up to
// `[..., Tq, Tk]` (see [MaskFill]). Combined with Causal and KeyMask if set.
func (b *ScaledDotProductBuilder) FillMask(mask *Node) *ScaledDotProductBuilder {
	b.fillMask = mask
	return b
}

// KeyMask sets a padding mask, boolean `[B, Tk]`, true for real tokens (see [KeyMaskFill]).
func (b *ScaledDotProductBuilder) KeyMask(keyMask *Node) *ScaledDotProductBuilder {
	b.keyMask = keyMask
	return b
}

// DropoutMask sets the training-mode dropout noise applied to the weights, shaped like them
// (`[..., Tq, Tk]`): 0 or 1/(1-p) per entry (see [Dropout]). Nil (the default) is evaluation.
func (b *ScaledDotProductBuilder) DropoutMask(mask *Node) *ScaledDotProductBuilder {
	b.dropoutMask = mask
	return b
}

// ScaleQueries folds 1/sqrt(dk) into the queries (`[..., Tq, dk]`) instead of dividing the
// scores (`[..., Tq, Tk]`): one pass over the small tensor instead of the big one, the usual
// trick of fast implementations. The results differ from PyTorch's in the last bits (and by
// more where the softmax is sharp), so the modules use it only when asked. Default false.
func (b *ScaledDotProductBuilder) ScaleQueries(scale bool) *ScaledDotProductBuilder {
	b.scaleQueries = scale
	return b
}

// Done builds the attention and returns the output `[..., Tq, dv]` and the weights
// `[..., Tq, Tk]` before dropout.
func (b *ScaledDotProductBuilder) Done() (output, weights *Node) {
	output, weights, _ = b.DoneWithDropped()
	return output, weights
}

// DoneWithDropped is Done that also returns the weights after dropout (the same node as
// weights when no DropoutMask is set), the matrix that actually multiplies the values.
func (b *ScaledDotProductBuilder) DoneWithDropped() (output, weights, dropped *Node) {
	q, k, v := b.q, b.k, b.v
	dk := q.Shape().Dim(-1)
	if b.scaleQueries {
		q = MulScalar(q, 1/math.Sqrt(float64(dk))) // [..., Tq, dk]
	}
	scores := Scores(q, k) // [..., Tq, Tk]
	if b.causal {
		scores = CausalMaskFill(scores)
	}
	if b.fillMask != nil {
		scores = MaskFill(scores, b.fillMask, math.Inf(-1))
	}
	if b.keyMask != nil {
		scores = KeyMaskFill(scores, b.keyMask)
	}
	if !b.scaleQueries {
		scores = ScaleScores(scores, dk)
	}
	weights = StableSoftmax(scores) // [..., Tq, Tk]
	dropped = weights
	if b.dropoutMask != nil {
		dropped = Dropout(weights, b.dropoutMask)
	}
	output = ContextVectors(dropped, v) // [..., Tq, dv]
	return output, weights, dropped
}
