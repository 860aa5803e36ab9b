package gpt

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/nn"
)

// TestGeluTraining: in a training graph gelu is x·Φ(x) and its gradient dy·(Φ(x) + x·φ(x)) (PyTorch's
// GeluBackward), both within float32 rounding of the float64 formulas, for x across GELU's range
// (large negative x, where Φ(x) underflows, included) and a cotangent dy that is not all ones.
func TestGeluTraining(t *testing.T) {
	m, _ := tinyModel(t, 0)
	xs := []float32{-12, -6, -3, -1.5, -0.7, -1e-3, 0, 1e-3, 0.3, 1, 2.5, 4, 9}
	dys := make([]float32, len(xs))
	for i := range dys {
		dys[i] = 0.5 + 0.25*float32(i%3) - float32(i%2)
	}
	exec := MustNewExec(m.backend, func(x, dy *Node) []*Node {
		m.store.SetTraining(x.Graph(), true)
		y := gelu(x)
		return []*Node{y, Gradient(ReduceAllSum(Mul(y, dy)), x)[0]}
	})
	out := exec.MustExec(xs, dys)
	y, dx := tensors.MustCopyFlatData[float32](out[0]), tensors.MustCopyFlatData[float32](out[1])
	for i, xf := range xs {
		x := float64(xf)
		cdf := (1 + math.Erf(x/math.Sqrt2)) / 2
		pdf := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		wantY, wantDX := x*cdf, float64(dys[i])*(cdf+x*pdf)
		if d := math.Abs(float64(y[i]) - wantY); d > 1e-6*math.Max(1, math.Abs(wantY)) {
			t.Errorf("gelu(%g) = %.9g, want %.9g", x, y[i], wantY)
		}
		if d := math.Abs(float64(dx[i]) - wantDX); d > 1e-6*math.Max(1, math.Abs(wantDX)) {
			t.Errorf("gradient at x=%g, dy=%g: %.9g, want %.9g", x, dys[i], dx[i], wantDX)
		}
	}
}

// TestLayerNormGradients: PyTorch's formula gives GoMLX's gradients of nn.LayerNorm (its
// differentiated formula) for x, the weight and the bias, to float32 rounding, on rows of
// different scales and a cotangent that is not all ones.
func TestLayerNormGradients(t *testing.T) {
	m, _ := tinyModel(t, 0)
	const rows, c = 6, 16
	x, w, b, dy := make([]float32, rows*c), make([]float32, c), make([]float32, c), make([]float32, rows*c)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.7)) * float32(1+i/c*3) // row r scaled by 1+3r
		dy[i] = float32(math.Cos(float64(i) * 1.3))
	}
	for i := range w {
		w[i], b[i] = 0.5+float32(i)/c, float32(i%3)-1
	}
	exec := MustNewExec(m.backend, func(x, w, b, dy *Node) []*Node {
		want := Gradient(ReduceAllSum(Mul(nn.LayerNorm(x, []int{-1}, layerNormEps, w, b, nil), dy)), x, w, b)
		return append(layerNormGradients(x, w, dy, true), want...)
	})
	out := exec.MustExec(tensors.FromFlatDataAndDimensions(x, 2, 3, c), w, b, tensors.FromFlatDataAndDimensions(dy, 2, 3, c))
	for i, name := range []string{"x", "weight", "bias"} {
		got, want := tensors.MustCopyFlatData[float32](out[i]), tensors.MustCopyFlatData[float32](out[i+3])
		if len(got) != len(want) {
			t.Fatalf("d%s has %d values, want %d", name, len(got), len(want))
		}
		for j := range want {
			if d := math.Abs(float64(got[j] - want[j])); d > 2e-5*math.Max(1, math.Abs(float64(want[j]))) {
				t.Errorf("d%s[%d] = %.8g, GoMLX's gradient %.8g", name, j, got[j], want[j])
			}
		}
	}
}
