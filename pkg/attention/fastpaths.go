package attention

import (
	"fmt"
	"strings"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// This file holds two ways around slow paths of GoMLX v0.28.8's pure-Go backend ("go",
// github.com/gomlx/compute v0.1.6). repeatLeading gives exactly the values of a broadcast;
// fusedSoftmax serves only sizes the seeds never reach (see StableSoftmax).

// repeatLeading returns x `[dims[k:]...]` repeated over the leading axes `dims[:k]`: the result
// is `[dims...]`, what BroadcastToDims(ExpandLeftToRank(x, len(dims)), dims...) gives. On the
// pure-Go backend it concatenates copies of x, which that backend does with one block copy per
// copy, where its BroadcastInDim computes an index for every element (slow for a causal mask
// broadcast to `[8, 12, 1024, 1024]`). Elsewhere it broadcasts.
func repeatLeading(x *Node, dims ...int) *Node {
	k := len(dims) - x.Rank()
	n := 1
	for _, d := range dims[:k] {
		n *= d
	}
	if n == 1 || !onGoBackend(x) {
		return BroadcastToDims(ExpandLeftToRank(x, len(dims)), dims...)
	}
	one := InsertAxes(x, 0) // [1, dims[k:]...]
	copies := make([]*Node, n)
	for i := range copies {
		copies[i] = one
	}
	tiled := Concatenate(copies, 0) // [n, dims[k:]...]
	return Reshape(tiled, dims...)
}

// onGoBackend reports whether x's graph runs on the pure-Go backend.
func onGoBackend(x *Node) bool { return backend.IsGo(x.Graph().Backend()) }

// fusedSoftmax is the softmax over the last axis of x as the backend's one fused op, with the
// gradient dx = y ⊙ (v − Σ v ⊙ y) computed from the fused output y (registered for the fused
// op's node type in init). GoMLX's graph.Softmax uses the same fused op but differentiates its
// step-by-step twin, which a gradient then computes as well: six more passes over the scores.
// Backends without the fused op get graph.Softmax.
func fusedSoftmax(x *Node) *Node {
	if !x.Graph().Backend().Capabilities().Operations[compute.OpTypeFusedSoftmax] {
		return Softmax(x, -1)
	}
	return BackendFusedSoftmax(x, x.Rank()-1)
}

func init() {
	if _, taken := VJPRegistration[NodeTypeFusedSoftmax]; !taken {
		VJPRegistration[NodeTypeFusedSoftmax] = fusedSoftmaxVJP
	}
}

// fusedSoftmaxVJP is the vector-Jacobian product of y = softmax(x) over the last axis for the
// cotangent v: y ⊙ (v − Σ_last v ⊙ y). GoMLX's own fused softmax nodes carry their step-by-step
// twin for the gradient and never come here; only fusedSoftmax's nodes (last axis) do.
func fusedSoftmaxVJP(node *Node, vjps []*Node, _ shapes.Shape) []*Node {
	if want := fmt.Sprintf("axis=%d)", node.Rank()-1); !strings.Contains(node.String(), want) {
		panic(fmt.Errorf("attention: gradient of %s: only the softmax over the last axis (%s) is differentiable here", node, want))
	}
	y, v := node, vjps[0]
	dot := ReduceAndKeep(Mul(v, y), ReduceSum, -1) // [..., 1]
	return []*Node{Mul(y, Sub(v, dot))}            // [..., T]
}
