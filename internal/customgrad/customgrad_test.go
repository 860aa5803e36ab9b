package customgrad

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/backend"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// TestWrongCount: grads must return one gradient per input; With says so by name.
func TestWrongCount(t *testing.T) {
	defer func() {
		if err := fmt.Sprint(recover()); !strings.Contains(err, "customgrad.With: grads returned 0 gradients for 2 inputs") {
			t.Errorf("panic %q, want With's count error", err)
		}
	}()
	MustExecOnce(backend.MustDefault(), func(x, w *Node) *Node {
		y := With(func(in ...*Node) *Node { return Mul(in[0], in[1]) }, func(*Node) []*Node { return nil }, x, w)
		return Gradient(ReduceAllSum(y), x)[0]
	}, []float32{1}, []float32{2})
}

// TestTwoInputs: each input gets its own gradient, the value is fn's.
func TestTwoInputs(t *testing.T) {
	outs := MustExecOnceN(backend.MustDefault(), func(x, w *Node) (*Node, *Node, *Node) {
		y := With(func(in ...*Node) *Node { return Mul(in[0], in[1]) },
			func(cot *Node) []*Node { return []*Node{MulScalar(cot, 10), MulScalar(cot, 100)} }, x, w)
		g := Gradient(ReduceAllSum(y), x, w)
		return y, g[0], g[1]
	}, []float32{1, 2}, []float32{3, 4})
	if got := fmt.Sprint(outs[0].Value(), outs[1].Value(), outs[2].Value()); got != "[3 8] [10 10] [100 100]" {
		t.Errorf("value and gradients %s, want [3 8] [10 10] [100 100]", got)
	}
}
