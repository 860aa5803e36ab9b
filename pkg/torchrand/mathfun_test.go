package torchrand

import (
	"math"
	"testing"
)

// TestMathfunConstants pins the float32 constants to the bits the C code gets from its double
// literals (rounded double -> float, checked with numpy).
func TestMathfunConstants(t *testing.T) {
	tests := []struct {
		name string
		v    float32
		bits uint32
	}{
		{"SQRTHF", cephesSQRTHF, 0x3f3504f3},
		{"logP0", logP0, 0x3d9021bb}, {"logP1", logP1, 0xbdebd1b8}, {"logP2", logP2, 0x3def251a},
		{"logP3", logP3, 0xbdfe5d4f}, {"logP4", logP4, 0x3e11e9bf}, {"logP5", logP5, 0xbe2aae50},
		{"logP6", logP6, 0x3e4cceac}, {"logP7", logP7, 0xbe7ffffc}, {"logP8", logP8, 0x3eaaaaaa},
		{"logQ1", logQ1, 0xb95e8083}, {"logQ2", logQ2, 0x3f318000},
		{"FOPI", cephesFOPI, 0x3fa2f983},
		{"DP1", minusDP1, 0xbf490000}, {"DP2", minusDP2, 0xb97da000}, {"DP3", minusDP3, 0xb3222169},
		{"coscofP0", coscofP0, 0x37ccf5ce}, {"coscofP1", coscofP1, 0xbab6061a}, {"coscofP2", coscofP2, 0x3d2aaaa5},
		{"sincofP0", sincofP0, 0xb94ca1f9}, {"sincofP1", sincofP1, 0x3c08839e}, {"sincofP2", sincofP2, 0xbe2aaaa3},
		{"twoPi", twoPi32, 0x40c90fdb},
	}
	for _, tc := range tests {
		if got := math.Float32bits(tc.v); got != tc.bits {
			t.Errorf("%s = %#x, want %#x", tc.name, got, tc.bits)
		}
	}
}

// TestLog32SinCos32 checks the polynomials stay within a few ulp of the float64 functions over
// their whole domain in normal_fill (a sanity check: exactness is pinned by the goldens).
func TestLog32SinCos32(t *testing.T) {
	ulps := func(got float32, want float64) float64 {
		w := float32(want)
		return math.Abs(float64(got)-want) / float64(math.Nextafter32(float32(math.Abs(float64(w))), float32(math.Inf(1)))-float32(math.Abs(float64(w))))
	}
	worstLog, worstSin, worstCos := 0.0, 0.0, 0.0
	for k := 1; k <= 1<<24; k += 97 {
		u := float32(k) * 0x1p-24
		if l := log32(u); math.Log(float64(u)) != 0 {
			worstLog = max(worstLog, ulps(l, math.Log(float64(u))))
		}
		theta := float32(twoPi32 * (float32(k-1) * 0x1p-24))
		s, c := sincos32(theta)
		if math.Abs(math.Sin(float64(theta))) > 1e-3 {
			worstSin = max(worstSin, ulps(s, math.Sin(float64(theta))))
		}
		if math.Abs(math.Cos(float64(theta))) > 1e-3 {
			worstCos = max(worstCos, ulps(c, math.Cos(float64(theta))))
		}
	}
	if log32(1) != 0 {
		t.Errorf("log32(1) = %g, want 0", log32(1))
	}
	if worstLog > 4 || worstSin > 4 || worstCos > 4 {
		t.Errorf("worst errors: log %.1f ulp, sin %.1f ulp, cos %.1f ulp; want <= 4", worstLog, worstSin, worstCos)
	}
	t.Logf("worst errors: log %.1f ulp, sin %.1f ulp, cos %.1f ulp", worstLog, worstSin, worstCos)
}

// TestBoxMuller8 checks the fast 8-lane kernel against the scalar log32/sincos32 (built on the
// correctly rounded fma32) for every input normal_fill can produce: each of the 2^24 uniforms
// k·2^-24 as a radius input and as an angle input. This is what licenses fma32e (no check) and
// fma32x (midpoint check only) inside boxMuller8. A block flagged as risky is recomputed exactly
// by normalFill16, so its lanes are retested one at a time: an input must be either exact or
// flagged on its own, whatever its neighbours.
func TestBoxMuller8(t *testing.T) {
	var d [16]float32
	var r, s, c [8]float32
	flagged, inputsFlagged, bad := 0, 0, 0
	check := func(j int) {
		u, v := d[j], d[j+8]
		rr := float32(math.Sqrt(float64(-2 * log32(1-u))))
		ss, cc := sincos32(float32(twoPi32 * v))
		if math.Float32bits(rr) != math.Float32bits(r[j]) || math.Float32bits(ss) != math.Float32bits(s[j]) ||
			math.Float32bits(cc) != math.Float32bits(c[j]) {
			if bad++; bad <= 5 {
				t.Errorf("u=%g, v=%g: boxMuller8 = (%g, %g, %g), exact (%g, %g, %g)", u, v, r[j], s[j], c[j], rr, ss, cc)
			}
		}
	}
	for k := 0; k < 1<<24; k += 8 {
		for j := range 8 {
			d[j] = float32(k+j) * 0x1p-24
			d[j+8] = float32(k+j) * 0x1p-24
		}
		if !boxMuller8(&d, &r, &s, &c) {
			for j := range 8 {
				check(j)
			}
			continue
		}
		flagged++
		for j := range 8 {
			u := float32(k+j) * 0x1p-24
			for i := range 8 {
				d[i], d[i+8] = u, u
			}
			if boxMuller8(&d, &r, &s, &c) {
				inputsFlagged++
			} else {
				check(0)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d lanes differ from the exact computation", bad)
	}
	// Recomputing must stay rare, or normal_fill gets slow.
	if flagged > 1<<21/1000 {
		t.Errorf("%d of %d blocks flagged for recomputation, want < 0.1%%", flagged, 1<<21)
	}
	t.Logf("%d of %d blocks flagged; %d inputs flagged on their own", flagged, 1<<21, inputsFlagged)
}
