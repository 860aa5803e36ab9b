package torchrand

import "math"

// fma32 returns a·b + c rounded once to float32 (round to nearest, ties to even), like the
// vfmadd instructions of PyTorch's AVX2 kernels.
//
// a·b is exact in float64 (24+24 significant bits), so s = a·b + c in float64 is the exact sum
// rounded once. Rounding s again to float32 is correct unless s lies exactly halfway between two
// float32 values while the exact sum does not (double rounding). In the normal float32 range such
// an s has the 29 low bits of its mantissa equal to 1<<28; in the subnormal range (and for zero)
// the midpoint bit sits higher up. doubleRoundingRisk tests both, and fma32Slow settles them.
func fma32(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if !doubleRoundingRisk(math.Float64bits(s)) {
		return float32(s)
	}
	return fma32Slow(a, b, c)
}

// doubleRoundingRisk reports whether float32(s) may differ from the correctly rounded exact value
// that the float64 s approximates: s is on a float32 midpoint, or |s| < 2^-126 (float32
// subnormal or zero).
func doubleRoundingRisk(bits uint64) bool {
	return bits&(1<<29-1) == 1<<28 || bits&(0x7ff<<52) < (1023-126)<<52
}

// fma32x is fma32 for the hot loop of normal_fill: it always returns float32(a·b+c computed in
// float64) and sets *risk when s sits on a float32 midpoint, so that the caller recomputes with
// fma32. Unlike fma32 it inlines, and it skips the subnormal test: it is only used where every
// result is 0 or at least 2^-126 in magnitude (log32x, sincos32x over normal_fill's inputs;
// TestMathfunFastPaths checks all of them).
func fma32x(a, b, c float32, risk *bool) float32 {
	s := float64(a)*float64(b) + float64(c)
	if math.Float64bits(s)&(1<<29-1) == 1<<28 {
		*risk = true
	}
	return float32(s)
}

// fma32e is fma32 where a·b + c is known to be exact in float64 (its significant bits span at
// most 53 places), so that one rounding to float32 is all there is. boxMuller8 uses it for
// the multiply-adds where that holds for every input (TestBoxMuller8 checks them all).
func fma32e(a, b, c float32) float32 {
	return float32(float64(a)*float64(b) + float64(c))
}

// fma32Slow is fma32 for sums whose float64 rounding may sit on a float32 midpoint.
//
//go:noinline
func fma32Slow(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact
	cc := float64(c)
	s := p + cc
	r := float32(s)
	if float64(r) == s || s != s {
		return r // s is a float32 (so is the exact sum's rounding), or NaN
	}
	// Error-free transformation (TwoSum): p + cc == s + e exactly.
	bv := s - p
	e := (p - (s - bv)) + (cc - bv)
	if e == 0 {
		return r // s is the exact sum: float32(s) rounds it once
	}
	// The float32 neighbours lo < s < hi.
	var lo, hi float64
	if float64(r) < s {
		lo, hi = float64(r), float64(math.Nextafter32(r, float32(math.Inf(1))))
	} else {
		lo, hi = float64(math.Nextafter32(r, float32(math.Inf(-1)))), float64(r)
	}
	// Beyond the largest float32 the rounding grid continues with one more step, 2^128.
	if math.IsInf(hi, 1) {
		hi = 0x1p128
	}
	if math.IsInf(lo, -1) {
		lo = -0x1p128
	}
	if (lo+hi)/2 != s {
		return r // not a midpoint: float32(s) is already the nearest to the exact sum
	}
	// s is a midpoint and the exact sum is s + e: round toward e.
	var want float64
	if e > 0 {
		want = hi
	} else {
		want = lo
	}
	return float32(want) // ±2^128 becomes ±Inf
}
