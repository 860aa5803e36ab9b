package torchrand

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is a·b + c rounded once to float32, computed with math/big.
func exactFMA32(a, b, c float32) float32 {
	if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsNaN(float64(c)) {
		return float32(math.NaN())
	}
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(400).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(400).SetFloat64(float64(c)))
	if x.Sign() == 0 {
		// Exact zero: IEEE gives +0 unless both a·b and c are -0.
		return float32(float64(a)*float64(b) + float64(c))
	}
	f, _ := x.Float32()
	return f
}

func TestFMA32(t *testing.T) {
	const (
		a1 = float32(65281.0 / 65536) // a1·b1 == 1 + 2^-24, a float32 midpoint
		b1 = float32(257.0 / 256)
	)
	tiny := float32(0x1p-80)
	next := math.Nextafter32(1, 2) // 1 + 2^-23
	tests := []struct {
		name    string
		a, b, c float32
		want    float32
	}{
		// Double rounding: float64(a·b+c) is the midpoint 1+2^-24, which ties to 1, but the
		// exact sum is above it.
		{"midpoint, exact above", a1, b1, tiny, next},
		{"midpoint, exact below", a1, b1, -tiny, 1},
		{"midpoint, negated, exact above", -a1, b1, -tiny, -next},
		{"midpoint, negated, exact below", -a1, b1, tiny, -1},
		// (1+2^-23)(1-2^-23)·2^-24 = 2^-24 - 2^-70: plus 1+2^-23 lands on the midpoint
		// 1+1.5·2^-23, which ties up to 1+2^-22, but the exact sum is below it.
		{"midpoint tie up, exact below", next, (1 - 0x1p-23) * 0x1p-24, next, next},
		{"exact midpoint ties to even", a1, b1, 0, 1},
		{"overflow threshold minus one", 18631 * 0x1p60, 1801 * 0x1p43, -1, math.MaxFloat32},
		{"overflow threshold exactly", 18631 * 0x1p60, 1801 * 0x1p43, 0, float32(math.Inf(1))},
		{"-0·1 + +0 is +0", float32(math.Copysign(0, -1)), 1, 0, 0},
		// Subnormal result: a·b = 2^-150 - 2^-196, plus 1025·2^-149 sums to just below the midpoint
		// between 1025 and 1026 units of 2^-149; float64 rounds onto it, which ties to 1026.
		{"subnormal midpoint, exact below", next * 0x1p-75, (1 - 0x1p-23) * 0x1p-75, 1025 * 0x1p-149, 1025 * 0x1p-149},
		{"signed zero result", 2, 3, -6, 0},
		{"plain", 1.5, 2.25, -0.125, 3.25},
		{"inf", float32(math.Inf(1)), 2, 1, float32(math.Inf(1))},
	}
	for _, tc := range tests {
		got := fma32(tc.a, tc.b, tc.c)
		if math.Float32bits(got) != math.Float32bits(tc.want) {
			t.Errorf("%s: fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", tc.name, tc.a, tc.b, tc.c,
				got, math.Float32bits(got), tc.want, math.Float32bits(tc.want))
		}
		if want := exactFMA32(tc.a, tc.b, tc.c); !math.IsInf(float64(tc.want), 0) && math.Float32bits(want) != math.Float32bits(tc.want) {
			t.Errorf("%s: test table says %g, math/big says %g", tc.name, tc.want, want)
		}
	}
	// The naive float32(float64 sum) really is wrong on these cases (else the table proves nothing).
	for _, i := range []int{0, 2, 4, 6, 9} {
		tc := tests[i]
		if naive := float32(float64(tc.a)*float64(tc.b) + float64(tc.c)); naive == tc.want {
			t.Errorf("%s: naive double rounding is right here, so the case tests nothing", tc.name)
		}
	}
}

// TestFMA32Random compares fma32 with math/big on random operands, many built so that the sum
// sits on or near a float32 midpoint, in the normal and the subnormal range.
func TestFMA32Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randf := func(minExp, maxExp int) float32 {
		m := float32(rng.Uint32()&0xFFFFFF|0x800000) * 0x1p-23 // [1, 2)
		if rng.IntN(4) == 0 {
			m = float32(rng.IntN(1<<12)+1) * 0x1p-11 // few bits
		}
		f := float32(math.Ldexp(float64(m), minExp+rng.IntN(maxExp-minExp+1)))
		if rng.IntN(2) == 0 {
			f = -f
		}
		return f
	}
	n := 300000
	if testing.Short() {
		n = 30000
	}
	bad := 0
	for i := 0; i < n; i++ {
		var a, b, c float32
		switch i % 3 {
		case 0: // comparable magnitudes
			a, b, c = randf(-10, 10), randf(-10, 10), randf(-20, 20)
		case 1: // c far below a·b, or a·b near -c: cancellation and midpoints
			a, b = randf(-4, 4), randf(-4, 4)
			c = float32(-float64(a) * float64(b)) // nearest float32 to -a·b
			if rng.IntN(2) == 0 {
				c = randf(-90, -40)
			}
		default: // subnormal range
			a, b, c = randf(-80, -60), randf(-80, -60), randf(-149, -126)
		}
		got, want := fma32(a, b, c), exactFMA32(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) {
			if bad++; bad <= 5 {
				t.Errorf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d random fma32 results differ", bad, n)
	}
}
