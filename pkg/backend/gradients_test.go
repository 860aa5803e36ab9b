package backend

import (
	"slices"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

func TestIsIdentityTranspose(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.NewGraph(b, "transposes")
	square := graph.Parameter(g, "square", shapes.Make(dtypes.Float32, 3, 3))
	cube := graph.Parameter(g, "cube", shapes.Make(dtypes.Float32, 2, 3, 4))
	for _, c := range []struct {
		what string
		n    *graph.Node
		want bool
	}{
		{"[3, 3] permuted 0, 1", graph.TransposeAllAxes(square, 0, 1), true},
		{"[3, 3] permuted 1, 0 (same shape, not the identity)", graph.TransposeAllAxes(square, 1, 0), false},
		{"[2, 3, 4] permuted 0, 1, 2", graph.TransposeAllAxes(cube, 0, 1, 2), true},
		{"[2, 3, 4] permuted 0, 2, 1", graph.TransposeAllAxes(cube, 0, 2, 1), false},
		{"a Neg of [3, 3]", graph.Neg(square), false},
	} {
		if got := isIdentityTranspose(c.n); got != c.want {
			t.Errorf("isIdentityTranspose(%s) = %v, want %v (node %s)", c.what, got, c.want, c.n)
		}
	}
}

// TestDotGeneralGradientSkipsIdentityTranspose: the gradients of a Linear-shaped product
// y = x·Wᵀ are x's and W's gradients directly (no transpose node on top) and have the right values.
func TestDotGeneralGradientSkipsIdentityTranspose(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	x := tensors.FromValue([][]float32{{1, 2, 3}, {4, 5, 6}})                        // [2, 3]
	w := tensors.FromValue([][]float32{{1, 0, -1}, {2, 1, 0}, {0, 0, 1}, {1, 1, 1}}) // [4, 3]
	c := tensors.FromValue([][]float32{{1, 2, 3, 4}, {-1, 0, 1, 2}})                 // [2, 4]: loss = Σ c ⊙ y
	var kinds []graph.NodeType
	out := graph.MustExecOnceN(b, func(x, w, c *graph.Node) []*graph.Node {
		y := graph.Einsum("ij,kj->ik", x, w) // [2, 4]
		grads := graph.Gradient(graph.ReduceAllSum(graph.Mul(y, c)), x, w)
		for _, gr := range grads {
			kinds = append(kinds, gr.Type())
		}
		return grads
	}, x, w, c)
	for i, k := range kinds {
		if k == graph.NodeTypeTranspose {
			t.Errorf("gradient %d is a Transpose node; want the identity transpose skipped", i)
		}
	}
	// dL/dx = c·W `[2, 3]`, dL/dW = cᵀ·x `[4, 3]`.
	wantX := []float32{1 + 4 + 0 + 4, 0 + 2 + 0 + 4, -1 + 0 + 3 + 4, -1 + 0 + 0 + 2, 0 + 0 + 0 + 2, 1 + 0 + 1 + 2}
	wantW := []float32{1 - 4, 2 - 5, 3 - 6, 2, 4, 6, 3 + 4, 6 + 5, 9 + 6, 4 + 8, 8 + 10, 12 + 12}
	if got := tensors.MustCopyFlatData[float32](out[0]); !slices.Equal(got, wantX) {
		t.Errorf("dL/dx = %v, want %v", got, wantX)
	}
	if got := tensors.MustCopyFlatData[float32](out[1]); !slices.Equal(got, wantW) {
		t.Errorf("dL/dW = %v, want %v", got, wantW)
	}
}
