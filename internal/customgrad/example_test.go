package customgrad_test

import (
	"fmt"

	"github.com/attnbook/attnbook/internal/customgrad"
	"github.com/attnbook/attnbook/pkg/backend"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// A gradient reversal (Ganin & Lempitsky 2015): the value is x·x as usual, the gradient is
// GoMLX's, 2x·cot, with its sign flipped.
func ExampleWith() {
	outs := MustExecOnceN(backend.MustDefault(), func(x *Node) (*Node, *Node) {
		y := customgrad.With(func(in ...*Node) *Node { return Square(in[0]) },
			func(cot *Node) []*Node { return []*Node{Neg(Mul(MulScalar(x, 2), cot))} }, x)
		dx := Gradient(ReduceAllSum(MulScalar(y, 3)), x)[0]
		return y, dx
	}, []float32{-1.5, 0.5, 2, 4})
	fmt.Println("y: ", outs[0].Value())
	fmt.Println("dx:", outs[1].Value())
	// Output:
	// y:  [2.25 0.25 4 16]
	// dx: [9 -3 -12 -24]
}
