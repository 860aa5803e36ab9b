package attention_test

import (
	"fmt"

	"github.com/attnbook/attnbook/pkg/attention"
	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
)

// Four query heads share two key/value heads (heads 0 and 1 read key/value head 0, heads 2 and 3
// head 1): the same attention as the book's formulation, which repeats the keys and values for
// every query head first, and PyTorch's numbers for torch.manual_seed(0) and the same three
// torch.randn draws. The first token sees only itself, so heads that share a value head start
// with the same context vector (rows 1 and 4, 7 and 10).
func ExampleGroupedQueryCausal() {
	g := torchrand.New(0)
	q := g.Randn(1, 4, 3, 2) // [B, H=4, T, hs]
	k := g.Randn(1, 2, 3, 2) // [B, Hkv=2, T, hs]
	v := g.Randn(1, 2, 3, 2) // [B, Hkv=2, T, hs]
	outs := MustExecOnceN(backend.MustDefault(), func(q, k, v *Node) (*Node, *Node) {
		grouped, _ := attention.GroupedQueryCausal(q, k, v) // [1, 4, 3, 2]
		repeated, _ := attention.ScaledDotProduct(q, attention.RepeatKV(k, 2), attention.RepeatKV(v, 2)).
			Causal(true).Done() // [1, 4, 3, 2]
		return grouped, ReduceAllMax(Abs(Sub(grouped, repeated)))
	}, q, k, v)
	fmt.Println("context vectors:", outs[0].Shape().Dimensions)
	printRows(outs[0])
	fmt.Println("largest difference from RepeatKV + ScaledDotProduct < 1e-6:", tensors.ToScalar[float32](outs[1]) < 1e-6)
	// Output:
	// context vectors: [1 4 3 2]
	// 0.1920 0.5428
	// -1.0786 0.3932
	// -1.0216 0.1396
	// 0.1920 0.5428
	// -1.1719 0.3822
	// -1.2218 0.1622
	// 0.2734 -0.9181
	// 0.1270 -0.3555
	// 0.0286 -0.3799
	// 0.2734 -0.9181
	// 0.0756 -0.1578
	// 0.1129 -0.6899
	// largest difference from RepeatKV + ScaledDotProduct < 1e-6: true
}
