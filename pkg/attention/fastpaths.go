package attention

import (
	"fmt"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

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
