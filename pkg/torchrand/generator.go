package torchrand

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
)

// MT19937 parameters.
const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// Generator is PyTorch's CPU generator: an MT19937 engine and the cached second value of the
// double-precision Box–Muller transform used by randn of fewer than 16 elements.
//
// The zero value is not usable: create one with New. A Generator is not safe for concurrent use.
type Generator struct {
	state [mtN]uint32
	index int // next state word to temper; mtN means "twist first"
	seed  uint32

	nextNormal    float64 // cached r·sin θ of the small randn path
	hasNextNormal bool
}

// New returns a Generator seeded like torch.manual_seed(seed).
//
// Only the low 32 bits of seed are used, as PyTorch does: seeds -1 and 1<<32-1 are the same, and
// so are 7 and 1<<32+7.
func New(seed int64) *Generator {
	g := &Generator{}
	g.ManualSeed(seed)
	return g
}

// ManualSeed reseeds g like torch.manual_seed(seed) (low 32 bits, with MT19937's init_genrand
// recurrence) and clears the cached normal value.
func (g *Generator) ManualSeed(seed int64) {
	s := uint32(seed)
	g.seed = s
	g.state[0] = s
	for i := 1; i < mtN; i++ {
		prev := g.state[i-1]
		g.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	g.index = mtN
	g.nextNormal, g.hasNextNormal = 0, false
}

// InitialSeed returns the 32-bit seed g was last seeded with, like torch.initial_seed().
func (g *Generator) InitialSeed() uint32 { return g.seed }

// Clone returns an independent copy of g: both produce the same numbers from here on.
func (g *Generator) Clone() *Generator {
	c := *g
	return &c
}

// twist regenerates the 624 state words.
func (g *Generator) twist() {
	mt := &g.state
	for i := 0; i < mtN-mtM; i++ {
		y := mt[i]&mtUpperMask | mt[i+1]&mtLowerMask
		mt[i] = mt[i+mtM] ^ y>>1 ^ (-(y & 1) & mtMatrixA)
	}
	for i := mtN - mtM; i < mtN-1; i++ {
		y := mt[i]&mtUpperMask | mt[i+1]&mtLowerMask
		mt[i] = mt[i+mtM-mtN] ^ y>>1 ^ (-(y & 1) & mtMatrixA)
	}
	y := mt[mtN-1]&mtUpperMask | mt[0]&mtLowerMask
	mt[mtN-1] = mt[mtM-1] ^ y>>1 ^ (-(y & 1) & mtMatrixA)
	g.index = 0
}

func temper(y uint32) uint32 {
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Random returns the next 32-bit output of the engine, like PyTorch's generator->random().
func (g *Generator) Random() uint32 {
	if g.index >= mtN {
		g.twist()
	}
	y := g.state[g.index]
	g.index++
	return temper(y)
}

// Random64 returns two outputs of the engine as one 64-bit number, the first in the high half,
// like PyTorch's generator->random64().
func (g *Generator) Random64() uint64 {
	hi := g.Random()
	lo := g.Random()
	return uint64(hi)<<32 | uint64(lo)
}

// float64 is PyTorch's uniform double in [0, 1): 53 low bits of random64() · 2^-53.
func (g *Generator) float64() float64 {
	return float64(g.Random64()&(1<<53-1)) * 0x1p-53
}

// fillUniform fills dst with PyTorch's float32 uniforms: (random() & 0xFFFFFF) · 2^-24, one
// engine output per element, in order.
func (g *Generator) fillUniform(dst []float32) {
	for len(dst) > 0 {
		if g.index >= mtN {
			g.twist()
		}
		k := min(mtN-g.index, len(dst))
		src := g.state[g.index : g.index+k]
		d := dst[:len(src)]
		for i, y := range src {
			y ^= y >> 11
			y ^= (y << 7) & 0x9d2c5680
			y ^= (y << 15) & 0xefc60000
			y ^= y >> 18
			d[i] = float32(int32(y&0xFFFFFF)) * 0x1p-24
		}
		g.index += k
		dst = dst[k:]
	}
}

// FillRand fills dst like torch.rand(len(dst)): uniform float32 values in [0, 1), each the low
// 24 bits of one engine output times 2^-24.
func (g *Generator) FillRand(dst []float32) { g.fillUniform(dst) }

// Float64s fills dst like torch.rand(len(dst), dtype=torch.float64): uniform float64 values in
// [0, 1), each the low 53 bits of Random64() times 2^-53.
func (g *Generator) Float64s(dst []float64) {
	for i := range dst {
		dst[i] = g.float64()
	}
}

// Rand returns torch.rand(*dims): a float32 tensor of shape `dims` with uniform values in [0, 1).
// No dims gives a scalar (torch.rand(())); a zero dimension gives an empty tensor and draws
// nothing. It panics with an *ArgumentError on a negative dimension.
func (g *Generator) Rand(dims ...int) *tensors.Tensor {
	checkDims("Rand", dims)
	t := newFloat32(dims)
	tensors.MustMutableFlatData(t, func(flat []float32) { g.fillUniform(flat) })
	return t
}

// Uniform fills dst like tensor.uniform_(from, to) on a float32 tensor of len(dst) elements.
//
// from and to are rounded to float32 first; each value is fma(u, to-from, from) with u a float32
// uniform in [0, 1) (see FillRand), computed with a single rounding as PyTorch's AVX2 build does.
// It panics with an *ArgumentError if from or to is not finite, from > to, or to-from overflows
// float32.
func (g *Generator) Uniform(dst []float32, from, to float64) {
	checkRange("Uniform", from, to)
	g.uniform(dst, float32(from), float32(to))
}

func checkRange(fn string, from, to float64) {
	switch {
	case math.IsNaN(from) || math.IsInf(from, 0) || math.Abs(from) > math.MaxFloat32:
		argPanic(fn, "from", "must be a finite float32, got %g", from)
	case math.IsNaN(to) || math.IsInf(to, 0) || math.Abs(to) > math.MaxFloat32:
		argPanic(fn, "to", "must be a finite float32, got %g", to)
	case from > to:
		argPanic(fn, "from", "must be <= to, got from=%g > to=%g", from, to)
	case to-from > math.MaxFloat32:
		argPanic(fn, "to", "- from must fit in float32, got to=%g, from=%g", to, from)
	}
}

// uniform is uniform_(from, to) with float32 bounds.
func (g *Generator) uniform(dst []float32, from, to float32) {
	g.fillUniform(dst)
	if from == 0 && to == 1 {
		return // fma(u, 1, 0) == u for u in [0, 1)
	}
	width := to - from
	for i, u := range dst {
		dst[i] = fma32(u, width, from)
	}
}

// newFloat32 returns a zero float32 tensor of shape dims (already checked).
func newFloat32(dims []int) *tensors.Tensor {
	return tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
}
