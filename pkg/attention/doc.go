// Package attention is every computation of the attnbook seed documents as GoMLX graphs that
// print the same numbers as PyTorch.
//
// It has two layers:
//
//   - Graph functions: pure functions from *Node to *Node, one per step the notebooks teach —
//     dot-product scores ([DotScores], [Scores]), naive and stable softmax ([NaiveNormalize],
//     [NaiveSoftmax], [StableSoftmax]), context vectors ([ContextVectors]), scaling
//     ([ScaleScores]), causal masks both ways ([CausalRenormalize], [CausalMaskFill]), padding
//     masks ([KeyMaskFill]), dropout with a given mask ([Dropout]), head splitting
//     ([SplitHeads], [MergeHeads], and the wrong [SplitHeadsNoTranspose]), projections
//     ([Linear]) and scaled dot-product attention for self and cross attention
//     ([ScaledDotProduct]); and two other formulations of causal attention for big inputs,
//     GoMLX's fused attention ([FusedCausal]) and this package's fast multi-head graph
//     ([FastCausalMultiHead], what [MultiHeadAttention.SetFast] runs); which one is quickest
//     depends on the backend and the size (docs/benchmarks.md). Past the seeds (notebook 11):
//     grouped-query and multi-query attention ([RepeatKV], [GroupedQueryCausal], the mask of
//     queries after a key–value cache [LaterKeysMask]); and flash attention (notebook 12:
//     [FlashCausal], tiles with the online softmax, no `[T, T]` scores forward or backward).
//   - Modules mirroring the seeds' PyTorch classes ([SelfAttentionV1], [SelfAttentionV2],
//     [CausalAttention], [MultiHeadAttentionWrapper], [MultiHeadAttention], [CrossAttention],
//     [Head], [HeadList]), and the bonus material's [GroupedQueryAttention]. Their weights are GoMLX variables drawn by a
//     [torchrand.Generator] in PyTorch's construction order, so a module built after
//     torchrand.New(123) holds the weights torch.manual_seed(123) gives the PyTorch class, and
//     its dropout masks are drawn from the same generator at call time, as nn.Dropout draws them.
//
// Every module runs eagerly (Forward, Call: one compiled graph per input shape, cached in the
// module) and inside bigger GoMLX models (Apply, ApplyWithMasks: a *model.Scope first, because
// the module owns variables; nil means the root scope of the module's own [Module.Store]),
// where GoMLX's autodiff can train its weights.
//
// # Shapes
//
// Doc comments name shapes in backticks with nanoGPT's letters: B batch, T tokens (Tq queries,
// Tk keys), D or d_in/d_out model widths, H heads, hs the head size (d_out / H).
//
// # Numbers
//
// The computations follow PyTorch's order of float32 operations where it matters for the
// printed digits: scores are divided by sqrt(d_k) (not multiplied by its inverse), masks are
// filled with -Inf before the softmax, and the softmax subtracts the row maximum. Small matrix
// products (up to 2^18 multiply-adds, the seeds' sizes) are summed in the reference BLAS's
// order — each product rounded, added left to right — instead of by GoMLX's blocked SIMD
// kernels, so [Linear], [Scores] and [ContextVectors] give PyTorch's bits. Results match
// PyTorch 1.13 (Debian's x86-64 build, the one behind the seed documents) to float32 rounding;
// the tests assert every number the seeds print and testdata/goldens.json at a relative error
// of 1e-6 (of each tensor's largest magnitude). One printed digit depends on the seed machine's
// BLAS: seed 000 prints the score -294.6535, which Debian's PyTorch and this package compute
// one float32 step away, as -294.65344. [MultiHeadAttention.SetFast] trades the exact operation
// order for speed on big inputs.
//
// # Errors
//
// Bad arguments — a d_in that does not match the weights, d_out not divisible by the number of
// heads, more tokens than the context length, wrong ranks, keys and values of different lengths,
// a dropout probability outside [0, 1] — panic with an *[ArgumentError] while the graph is
// built (or the module constructed), never silently broadcast. GoMLX's Exec returns such panics
// as errors, and so do the modules' Call methods.
//
// # GoMLX's attention layer
//
// GoMLX v0.28 has its own multi-head attention, ml/layers/attention.MultiHeadAttention, the same
// computation in another layout (`[B, T, H, hs]`); with UseTransposedWeights it takes this
// package's PyTorch-layout weights as they are. The cross-check (gomlx_test.go) loads a module's
// weights into it and gets the module's outputs and attention weights, and PyTorch's numbers for
// seeds 000 and 001, within 1e-6 — directly: GoMLX v0.26.0's layers.MultiHeadAttention divided
// the logits by sqrt(head_dim) twice, which v0.27 fixed. Its core, attention.Core, is also
// reachable here as [FusedCausal], the backend's fused scaled dot-product attention where one
// exists.
//
// # Backend
//
// Modules run on the process-wide backend of pkg/backend (backend.Default): XLA where a PJRT
// plugin is installed, else the pure-Go backend as backend.GoConfig starts it (one graph executor
// per core on small machines); see pkg/backend.
//
// Forward and Call compile one graph per input shape (and mode) and keep up to 1024 of them in
// the module, releasing the least recently used beyond: token-by-token generation runs every
// length from 1 to the context length without hitting GoMLX's own limit of 32 shapes per Exec.
//
// Papers: Vaswani et al. 2017, "Attention Is All You Need", https://arxiv.org/abs/1706.03762
// (scaled dot-product and multi-head attention); Srivastava et al. 2014, "Dropout: A Simple Way
// to Prevent Neural Networks from Overfitting" (inverted dropout, as nn.Dropout).
package attention

import (
	"fmt"

	"github.com/attnbook/attnbook/internal/argerr"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// ErrInvalidArgument is matched (errors.Is) by every *ArgumentError this package panics with.
var ErrInvalidArgument = argerr.Sentinel("attention")

// ArgumentError is the value this package panics with when a function, a constructor or a
// graph builder gets a bad argument. Its message reads "attention.<Func>: <Arg> <Problem>", for
// example "attention.SplitHeads: x shape (Float32)[2 6 5]: last axis (5) is not divisible by
// numHeads (2)". Its Pkg field is "attention".
type ArgumentError = argerr.Error

// argErr returns an *ArgumentError of this package.
func argErr(fn, arg, format string, args ...any) *ArgumentError {
	return argerr.New("attention", fn, arg, format, args...)
}

// argPanic panics with an *ArgumentError.
func argPanic(fn, arg, format string, args ...any) {
	argerr.Panic("attention", fn, arg, format, args...)
}

// Catch runs fn and returns the error it panicked with (an *ArgumentError, or any other error
// value, as GoMLX's graph building panics with errors), or nil if it returned normally.
// Panics that are not errors are passed on.
//
//	err := attention.Catch(func() { attention.SplitHeads(x, 4) })
func Catch(fn func()) error { return argerr.CatchAny(fn) }

// checkRank panics unless x has one of the given ranks.
func checkRank(fn, arg string, x *Node, ranks ...int) {
	if x == nil {
		argPanic(fn, arg, "must not be nil")
	}
	for _, r := range ranks {
		if x.Rank() == r {
			return
		}
	}
	want := fmt.Sprint(ranks[0])
	if len(ranks) > 1 {
		want = fmt.Sprint(ranks)
	}
	argPanic(fn, arg, "shape %s: rank must be %s, got %d", x.Shape(), want, x.Rank())
}

// checkFloat panics unless x is a float tensor.
func checkFloat(fn, arg string, x *Node) {
	if x == nil {
		argPanic(fn, arg, "must not be nil")
	}
	if !x.DType().IsFloat() {
		argPanic(fn, arg, "shape %s: must be a float tensor", x.Shape())
	}
}

// dimsEqual reports whether a and b are the same dimensions.
func dimsEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
