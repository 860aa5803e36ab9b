package backend

import (
	"fmt"
	"strings"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
)

// The gradient of a matrix product, GoMLX's DotGeneral, ends with a transpose of each operand's
// gradient back to that operand's axis order, also when the order is already right: GoMLX
// v0.28.8's dotGeneralVJP always calls TransposeAllAxes, and compute v0.1.6's pure-Go backend runs
// an identity transpose as a full copy, one element at a time. In a training step of notebook 10's
// GPT recipe that is 62 of the 98 transposes and 6.0 of the 9.5 million elements they move (every
// Linear's input and weight gradients, and those of the attention scores and context vectors).
//
// init wraps the DotGeneral entry of GoMLX's graph.VJPRegistration (documented as changeable) so
// that such a gradient is the transpose's input itself: the transpose node is left unused, and
// the backend's dead-code elimination skips it. Values do not change; a copy is dropped.
func init() {
	dotGeneralVJP := graph.VJPRegistration[graph.NodeTypeDotGeneral]
	if dotGeneralVJP == nil {
		return
	}
	graph.VJPRegistration[graph.NodeTypeDotGeneral] = func(node *graph.Node, vjpOutputs []*graph.Node, outputShape shapes.Shape) []*graph.Node {
		grads := dotGeneralVJP(node, vjpOutputs, outputShape)
		for i, g := range grads {
			if isIdentityTranspose(g) {
				grads[i] = g.Inputs()[0]
			}
		}
		return grads
	}
}

// isIdentityTranspose reports whether n is a Transpose whose permutation is 0, 1, …, rank−1. The
// permutation is not exported by GoMLX's Node, but its String names it ("permutation=[0 1 2]");
// a format that does not match reports false, which only keeps the copy.
func isIdentityTranspose(n *graph.Node) bool {
	if n == nil || n.Type() != graph.NodeTypeTranspose || len(n.Inputs()) != 1 || !n.Shape().Equal(n.Inputs()[0].Shape()) {
		return false
	}
	identity := make([]int, n.Rank())
	for i := range identity {
		identity[i] = i
	}
	return strings.Contains(n.String(), fmt.Sprintf("permutation=%v)", identity))
}
