package attention

import (
	"fmt"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// TestBackendProductGradients: for the layouts of Linear, Scores and ContextVectors at sizes past
// the exact path, backendProduct's value is DotGeneral's bit for bit and its gradients are GoMLX's
// own gradients of DotGeneral (to 1e-6 of the largest entry), with GoMLX's fused ops on and off.
func TestBackendProductGradients(t *testing.T) {
	for _, c := range []struct {
		name                     string
		lhsDims, rhsDims         []int
		lhsContract, rhsContract int
		batch                    []int
		viaCotangent             bool // how rhs's gradient goes (transposeCotangent)
	}{
		// rhs's gradient takes each of its two ways at these sizes (backendProduct).
		{"Linear", []int{96, 48}, []int{80, 48}, 1, 1, nil, true},                                    // x [rows, in], weight [out, in]: dy transposed
		{"Linear_out>in", []int{96, 16}, []int{160, 16}, 1, 1, nil, false},                           // x transposed, the result too
		{"Scores", []int{2, 3, 40, 16}, []int{2, 3, 50, 16}, 3, 3, []int{0, 1}, false},               // q [B, H, Tq, d], k [B, H, Tk, d]: q and the result
		{"ContextVectors", []int{2, 3, 40, 50}, []int{2, 3, 50, 24}, 3, 2, []int{0, 1}, false},       // weights [B, H, Tq, Tk], v [B, H, Tk, dv]: the weights
		{"ContextVectors_long", []int{1, 2, 200, 100}, []int{1, 2, 100, 8}, 3, 2, []int{0, 1}, true}, // the cotangent, the result too
	} {
		for _, fusion := range []string{"true", "false"} {
			t.Run(fmt.Sprintf("%s/fusion=%s", c.name, fusion), func(t *testing.T) {
				t.Setenv("GOMLX_FUSION", fusion)
				nb := len(c.batch)
				m, k := c.lhsDims[nb], c.lhsDims[nb+1]
				rhsNK := c.rhsContract == nb+1
				n := c.rhsDims[nb+1]
				if rhsNK {
					n = c.rhsDims[nb]
				}
				if got := transposeCotangent(m, n, k, rhsNK); got != c.viaCotangent {
					t.Fatalf("transposeCotangent(%d, %d, %d, %v) = %v, the case is for %v", m, n, k, rhsNK, got, c.viaCotangent)
				}
				g := torchrand.New(int64(len(c.name)))
				lhs, rhs := g.Randn(c.lhsDims...), g.Randn(c.rhsDims...)
				outs := runN(t, func(in []*Node) []*Node {
					got := backendProduct(in[0], c.lhsContract, c.batch, in[1], c.rhsContract, c.batch)
					want := DotGeneral(in[0], []int{c.lhsContract}, c.batch, in[1], []int{c.rhsContract}, c.batch)
					// A loss that weighs every output differently, so every gradient entry matters.
					wts := AddScalar(Iota(in[0].Graph(), want.Shape(), want.Rank()-1), 1)
					wts = Add(wts, Iota(in[0].Graph(), want.Shape(), want.Rank()-2))
					gotGrads := Gradient(ReduceAllSum(Mul(got, wts)), in[0], in[1])
					wantGrads := Gradient(ReduceAllSum(Mul(want, wts)), in[0], in[1])
					return append([]*Node{got, want}, append(gotGrads, wantGrads...)...)
				}, lhs, rhs)
				got, want := flat(outs[0]), flat(outs[1])
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("value [%d] = %v, DotGeneral gives %v", i, got[i], want[i])
					}
				}
				assertClose(t, "lhs gradient", outs[2], outs[4], relTol)
				assertClose(t, "rhs gradient", outs[3], outs[5], relTol)
				for i, name := range []string{"lhs", "rhs"} {
					if maxAbs(flat(outs[2+i])) == 0 {
						t.Errorf("%s gradient is all zeros", name)
					}
				}
			})
		}
	}
}
