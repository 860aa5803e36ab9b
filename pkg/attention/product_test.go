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
	}{
		{"Linear", []int{96, 48}, []int{80, 48}, 1, 1, nil},                             // x [rows, in], weight [out, in]
		{"Scores", []int{2, 3, 40, 16}, []int{2, 3, 50, 16}, 3, 3, []int{0, 1}},         // q [B, H, Tq, d], k [B, H, Tk, d]
		{"ContextVectors", []int{2, 3, 40, 50}, []int{2, 3, 50, 24}, 3, 2, []int{0, 1}}, // weights [B, H, Tq, Tk], v [B, H, Tk, dv]
	} {
		for _, fusion := range []string{"true", "false"} {
			t.Run(fmt.Sprintf("%s/fusion=%s", c.name, fusion), func(t *testing.T) {
				t.Setenv("GOMLX_FUSION", fusion)
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
