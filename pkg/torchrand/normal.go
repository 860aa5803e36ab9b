package torchrand

import (
	"math"

	"github.com/gomlx/gomlx/core/tensors"
)

// smallNormalMax: tensors with fewer elements take the double-precision Box–Muller path.
const smallNormalMax = 16

// normal64 is PyTorch's at::normal_distribution<double> draw (mean 0, std 1): the cached value if
// there is one, else Box–Muller on two 53-bit uniforms u1 (angle) and u2 (radius), caching
// r·sin θ and returning r·cos θ.
func (g *Generator) normal64() float64 {
	if g.hasNextNormal {
		g.hasNextNormal = false
		return g.nextNormal
	}
	u1 := g.float64()
	u2 := g.float64()
	r := math.Sqrt(-2 * math.Log(1-u2))
	theta := 2 * math.Pi * u1
	g.nextNormal, g.hasNextNormal = r*math.Sin(theta), true
	return r * math.Cos(theta)
}

// Randn returns torch.randn(*dims): a float32 tensor of shape `dims` with standard normal values.
// Tensors of fewer than 16 elements use (and may leave) the generator's cached normal value;
// larger ones use PyTorch's vectorized normal_fill (see FillRandn). No dims gives a scalar; a zero
// dimension gives an empty tensor and draws nothing. It panics with an *ArgumentError on a
// negative dimension.
func (g *Generator) Randn(dims ...int) *tensors.Tensor {
	checkDims("Randn", dims)
	t := newFloat32(dims)
	tensors.MustMutableFlatData(t, func(flat []float32) { g.normal(flat, 0, 1) })
	return t
}

// FillRandn fills dst like torch.randn(len(dst)), choosing PyTorch's path by len(dst) as for a
// contiguous tensor of that many elements:
//
//   - fewer than 16: double-precision Box–Muller, one value at a time, with the one-value cache
//     (so FillRandn of 3 and then of 3 equals FillRandn of 6);
//   - 16 or more: normal_fill: len(dst) float32 uniforms, transformed 16 at a time in float32
//     with the AVX2 kernel's log/sin/cos; a partial last block is redrawn as 16 new uniforms over
//     the last 16 slots (len(dst)+16 draws in all). This path neither reads nor clears the cache.
func (g *Generator) FillRandn(dst []float32) { g.normal(dst, 0, 1) }

// Normal fills dst like tensor.normal_(mean, std) on a contiguous float32 tensor of len(dst)
// elements: the paths of FillRandn, scaled by std and shifted by mean (in float64 for fewer than
// 16 elements, with a float32 fma otherwise). It panics with an *ArgumentError if mean is not
// finite or std is negative or not finite.
func (g *Generator) Normal(dst []float32, mean, std float64) {
	if math.IsNaN(mean) || math.IsInf(mean, 0) {
		argPanic("Normal", "mean", "must be finite, got %g", mean)
	}
	if !(std >= 0) || math.IsInf(std, 0) {
		argPanic("Normal", "std", "must be finite and >= 0, got %g", std)
	}
	g.normal(dst, mean, std)
}

func (g *Generator) normal(dst []float32, mean, std float64) {
	n := len(dst)
	if n < smallNormalMax {
		for i := range dst {
			// Unfused in every build (PyTorch's own choice is invisible: a fused and an unfused
			// result round to different float32 values with odds of about 2^-29).
			dst[i] = float32(float64(g.normal64()*std) + mean)
		}
		return
	}
	m32, s32 := float32(mean), float32(std)
	g.fillUniform(dst)
	for i := 0; i+smallNormalMax <= n; i += smallNormalMax {
		normalFill16((*[16]float32)(dst[i:]), m32, s32)
	}
	if n%smallNormalMax != 0 {
		tail := (*[16]float32)(dst[n-smallNormalMax:])
		g.fillUniform(tail[:])
		normalFill16(tail, m32, s32)
	}
}

// normalFill16 is normal_fill_16_AVX2: Box–Muller over 8 pairs of float32 uniforms, the radius
// from 1-d[j], the angle from d[j+8], each result fma(r·cos θ or r·sin θ, std, mean).
func normalFill16(d *[16]float32, mean, std float32) {
	var radius, sin, cos [8]float32
	if boxMuller8(d, &radius, &sin, &cos) {
		// A multiply-add fell on a float32 midpoint: redo the block with the exact fma32.
		for j := range 8 {
			radius[j] = float32(math.Sqrt(float64(-2 * log32(1-d[j]))))
			sin[j], cos[j] = sincos32(float32(twoPi32 * d[j+8]))
		}
	}
	if std == 1 {
		// fma(v, 1, mean) == v + mean rounded once: skip the general fma.
		for j := range 8 {
			d[j] = float32(radius[j]*cos[j]) + mean
			d[j+8] = float32(radius[j]*sin[j]) + mean
		}
		return
	}
	for j := range 8 {
		d[j] = fma32(float32(radius[j]*cos[j]), std, mean)
		d[j+8] = fma32(float32(radius[j]*sin[j]), std, mean)
	}
}
