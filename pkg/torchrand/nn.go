package torchrand

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// LinearBound returns the bound b of nn.Linear(in, ...)'s weight init, uniform_(-b, b): PyTorch's
// kaiming_uniform_(a=sqrt(5)) computed in float64 exactly as torch.nn.init does,
// sqrt(3)·sqrt(2/(1+a²))/sqrt(in), which is 1/sqrt(in) up to float64 rounding.
func LinearBound(in int) float64 {
	a := math.Sqrt(5)
	gain := math.Sqrt(2.0 / (1 + a*a))
	std := gain / math.Sqrt(float64(in))
	return math.Sqrt(3.0) * std
}

// Linear draws the parameters of nn.Linear(in, out, bias) as PyTorch initializes them: the
// weight, shape `[out, in]`, row-major, from uniform_(-b, b) with b = LinearBound(in) (≈
// 1/sqrt(in)), then, if bias, the bias, shape `[out]`, from uniform_(-1/sqrt(in), 1/sqrt(in)).
// b is nil when bias is false. Layers built one after another must be drawn in the same order as
// the PyTorch module constructs them (W_query, W_key, W_value, out_proj, ...).
//
// Note that y = x·Wᵀ + b: the weight is stored `[out, in]` like PyTorch's.
// It panics with an *ArgumentError if in or out is not positive.
func (g *Generator) Linear(in, out int, bias bool) (weight, b *tensors.Tensor) {
	if in <= 0 {
		argPanic("Linear", "in", "must be > 0, got %d", in)
	}
	if out <= 0 {
		argPanic("Linear", "out", "must be > 0, got %d", out)
	}
	checkDims("Linear", []int{out, in})
	weight = newFloat32([]int{out, in})
	wb := float32(LinearBound(in))
	tensors.MustMutableFlatData(weight, func(flat []float32) { g.uniform(flat, -wb, wb) })
	if bias {
		bb := float32(1 / math.Sqrt(float64(in)))
		b = newFloat32([]int{out})
		tensors.MustMutableFlatData(b, func(flat []float32) { g.uniform(flat, -bb, bb) })
	}
	return weight, b
}

func checkP(fn string, p float64) {
	if !(p >= 0 && p <= 1) {
		argPanic(fn, "p", "must be in [0, 1], got %g", p)
	}
}

// FillDropoutMask fills dst with the noise of training-mode nn.Dropout(p) over len(dst)
// elements: for each element one Random64(), u = its low 53 bits · 2^-53, kept when u < 1-p
// (compared in float64); kept elements are float32(1)/float32(1-p), dropped ones 0.
// p == 0 gives all ones and p == 1 all zeros, and both draw nothing, as in PyTorch.
// It panics with an *ArgumentError unless 0 <= p <= 1.
func (g *Generator) FillDropoutMask(dst []float32, p float64) {
	checkP("FillDropoutMask", p)
	g.dropoutMask(dst, p)
}

func (g *Generator) dropoutMask(dst []float32, p float64) {
	switch p {
	case 0:
		for i := range dst {
			dst[i] = 1
		}
		return
	case 1:
		clear(dst)
		return
	}
	q := 1 - p
	scale := float32(1) / float32(q)
	for i := range dst {
		if g.float64() < q {
			dst[i] = scale
		} else {
			dst[i] = 0
		}
	}
}

// DropoutMask returns the noise training-mode nn.Dropout(p) multiplies a tensor of shape `dims`
// by: a float32 tensor of shape `dims` whose elements are 0 (dropped, probability p) or
// float32(1)/float32(1-p) (kept). Dropout(0.5) on ones(6, 6) after seed 123 is this mask. See
// FillDropoutMask for the draws; p == 0 and p == 1 draw nothing. It panics with an
// *ArgumentError unless 0 <= p <= 1 or on a negative dimension.
func (g *Generator) DropoutMask(p float64, dims ...int) *tensors.Tensor {
	checkP("DropoutMask", p)
	checkDims("DropoutMask", dims)
	t := newFloat32(dims)
	tensors.MustMutableFlatData(t, func(flat []float32) { g.dropoutMask(flat, p) })
	return t
}

// Dropout returns nn.Dropout(p)(x) in training mode for a float32 tensor x of any shape: a new
// tensor x·mask, multiplied in float32, with mask as DropoutMask(p, x's dims...). As in PyTorch,
// p == 0 (and an empty x) returns x's values unchanged without drawing, and p == 1 returns x·0
// (zeros, with -0 for negative x and NaN for NaN or ±Inf) without drawing. It panics with an
// *ArgumentError if x is nil or not float32, or unless 0 <= p <= 1.
func (g *Generator) Dropout(x *tensors.Tensor, p float64) *tensors.Tensor {
	checkP("Dropout", p)
	if x == nil {
		argPanic("Dropout", "x", "must be a float32 tensor, got nil")
	}
	if x.DType() != dtypes.Float32 {
		argPanic("Dropout", "x", "must be a float32 tensor, got %s", x.DType())
	}
	in := tensors.MustCopyFlatData[float32](x)
	switch {
	case p == 0 || len(in) == 0:
		// x unchanged
	case p == 1:
		for i, v := range in {
			in[i] = v * 0
		}
	default:
		q := 1 - p
		scale := float32(1) / float32(q)
		for i, v := range in {
			if g.float64() < q {
				in[i] = v * scale
			} else {
				in[i] = v * 0
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(in, x.Shape().Dimensions...)
}
