// Package customgrad gives a graph function a gradient written by hand.
package customgrad

import (
	"fmt"

	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// With returns fn(inputs...)'s value, whose gradients are grads(cotangent) instead of GoMLX's
// differentiation of fn: one node per input, shaped like it, or nil where the input gets none from
// here (a value computed from another input, say); the cotangent is shaped like the value. fn must
// return a node it makes (not one of its inputs) from ops GoMLX can differentiate, and use no node
// computed from an input unless that node is an input too. grads builds its nodes while the
// gradient graph is built, so only the backward pass computes them; it may use the inputs and any
// node fn's value was made from.
//
// GoMLX lets a graph set the gradient of an identity only, and lets a node be differentiated as
// another graph (the alternate of a fused op, InternalFusedOpCaller). The value is fn on the inputs
// themselves; its alternate is fn on identities of the inputs, under an identity whose gradient,
// differentiated first, builds grads(cotangent) for the input identities to return. The gradients
// GoMLX writes for fn in between are never used, and the backend leaves them out, with the
// alternate's value (GOMLX_FUSION=false computes the alternate, identities' copies included).
func With(fn func(inputs ...*Node) *Node, grads func(cot *Node) []*Node, inputs ...*Node) *Node {
	alternate := func() *Node {
		var dInputs []*Node
		ids := make([]*Node, len(inputs))
		for i, in := range inputs {
			ids[i] = IdentityWithCustomGradient(in, func(_, _ *Node) *Node { return dInputs[i] })
		}
		return IdentityWithCustomGradient(fn(ids...), func(_, cot *Node) *Node {
			dInputs = grads(cot)
			if len(dInputs) != len(inputs) {
				panic(fmt.Errorf("customgrad.With: grads returned %d gradients for %d inputs", len(dInputs), len(inputs)))
			}
			return cot
		})
	}
	out, _ := InternalFusedOpCaller(func() *Node { return fn(inputs...) }, alternate, true)
	return out
}
