package torchrand

import "math"

// The float32 Cephes polynomials of avx_mathfun (log256_ps, sincos256_ps), as PyTorch 1.13's
// normal_fill_16_AVX2 evaluates them, lane by lane, with GCC's contractions into FMAs. Every
// float32(...) conversion below marks a product that the AVX2 code rounds on its own; fma32
// marks a fused multiply-add. Only arguments that normal_fill can produce are supported:
// log32 for x in (0, 1], sincos32 for θ in [0, 2π).
//
// boxMuller8 is the same arithmetic for the hot loop: step by step over 8 lanes like the SIMD
// code (so that the CPU overlaps the lanes' dependency chains), branch-free, with fma32e where
// the multiply-add is exact in float64 and fma32x elsewhere. TestBoxMuller8 checks it against
// log32 and sincos32 for every input normal_fill can produce.

const (
	cephesSQRTHF float32 = 0.707106781186547524
	logP0        float32 = 7.0376836292e-2
	logP1        float32 = -1.1514610310e-1
	logP2        float32 = 1.1676998740e-1
	logP3        float32 = -1.2420140846e-1
	logP4        float32 = 1.4249322787e-1
	logP5        float32 = -1.6668057665e-1
	logP6        float32 = 2.0000714765e-1
	logP7        float32 = -2.4999993993e-1
	logP8        float32 = 3.3333331174e-1
	logQ1        float32 = -2.12194440e-4
	logQ2        float32 = 0.693359375

	cephesFOPI float32 = 1.27323954473516 // 4/π
	minusDP1   float32 = -0.78515625
	minusDP2   float32 = -2.4187564849853515625e-4
	minusDP3   float32 = -3.77489497744594108e-8
	coscofP0   float32 = 2.443315711809948e-5
	coscofP1   float32 = -1.388731625493765e-3
	coscofP2   float32 = 4.166664568298827e-2
	sincofP0   float32 = -1.9515295891e-4
	sincofP1   float32 = 8.3321608736e-3
	sincofP2   float32 = -1.6666654611e-1

	twoPi32 float32 = 6.2831855 // float32(2π)
)

// log32 is avx_mathfun's log256_ps for one lane, x > 0 and normal.
func log32(x float32) float32 {
	bits := math.Float32bits(x)
	e := float32(int32(bits>>23)-127) + 1
	m := math.Float32frombits(bits&^0x7f800000 | 0x3f000000) // mantissa in [0.5, 1)
	var t float32
	if m < cephesSQRTHF {
		e -= 1
		t = (m - 1) + m
	} else {
		t = m - 1
	}
	z := float32(t * t)
	y := fma32(logP0, t, logP1)
	y = fma32(y, t, logP2)
	y = fma32(y, t, logP3)
	y = fma32(y, t, logP4)
	y = fma32(y, t, logP5)
	y = fma32(y, t, logP6)
	y = fma32(y, t, logP7)
	y = fma32(y, t, logP8)
	y = float32(y * t)
	y = fma32(y, z, float32(e*logQ1))
	y -= float32(0.5 * z)
	t += y
	return fma32(e, logQ2, t)
}

// sincos32 is avx_mathfun's sincos256_ps for one lane, θ >= 0.
func sincos32(theta float32) (sin, cos float32) {
	j := int32(float32(theta * cephesFOPI)) // truncation, as cvttps2dq
	j = (j + 1) &^ 1
	y := float32(j)
	x := fma32(y, minusDP1, theta)
	x = fma32(y, minusDP2, x)
	x = fma32(y, minusDP3, x)
	z := float32(x * x)

	c := fma32(fma32(coscofP0, z, coscofP1), z, coscofP2)
	c = float32(c * z)
	c = fma32(c, z, -float32(0.5*z))
	c += 1

	s := fma32(fma32(sincofP0, z, sincofP1), z, sincofP2)
	s = float32(s * z)
	s = fma32(s, x, x)

	if j&2 == 0 {
		sin, cos = s, c
	} else {
		sin, cos = c, s
	}
	if j&4 != 0 {
		sin = -sin
	}
	if (j-2)&4 == 0 {
		cos = -cos
	}
	return sin, cos
}

// boxMuller8 computes, for the 8 lanes of one normal_fill_16 block, radius = sqrt(-2·log32(1-d[j]))
// and sin, cos = sincos32(2π·d[j+8]). It returns risk == true, leaving the outputs unusable, when
// one of its multiply-adds may be misrounded (see fma32x); the caller then recomputes exactly.
func boxMuller8(d *[16]float32, radius, sin, cos *[8]float32) (risk bool) {
	const sqrtHFBits = 0x3f3504f3 // cephesSQRTHF
	var t, e, y, z [8]float32

	// log: split 1-d[j] into exponent e and mantissa, as log256_ps does (masks, no branches).
	for j := range 8 {
		bits := math.Float32bits(1 - d[j])
		ej := float32(int32(bits>>23)-127) + 1
		mb := bits&^0x7f800000 | 0x3f000000 // mantissa in [0.5, 1)
		mask := uint32(int32(mb-sqrtHFBits) >> 31)
		m := math.Float32frombits(mb)
		tj := (m - 1) + math.Float32frombits(mb&mask)
		e[j] = ej - math.Float32frombits(0x3f800000&mask)
		t[j] = tj
		z[j] = float32(tj * tj)
		y[j] = fma32x(logP0, tj, logP1, &risk)
	}
	for _, c := range [...]float32{logP2, logP3, logP4, logP5, logP6, logP7, logP8} {
		for j := range 8 {
			y[j] = fma32x(y[j], t[j], c, &risk)
		}
	}
	for j := range 8 {
		yj := float32(y[j] * t[j])
		yj = fma32x(yj, z[j], float32(e[j]*logQ1), &risk)
		yj -= float32(0.5 * z[j])
		l := fma32e(e[j], logQ2, t[j]+yj) // |e·logQ2| < 2^5 with 15 bits; t+y's last bit >= 2^-48
		radius[j] = float32(math.Sqrt(float64(-2 * l)))
	}

	// sincos of θ = 2π·d[j+8]. The three reduction steps are exact in float64: y·DP has at most
	// 28 significant bits and θ's last bit is no lower than 2^-45.
	var x [8]float32
	var q [8]int32
	for j := range 8 {
		theta := float32(twoPi32 * d[j+8])
		qj := (int32(float32(theta*cephesFOPI)) + 1) &^ 1
		yq := float32(qj)
		xj := fma32e(yq, minusDP1, theta)
		xj = fma32e(yq, minusDP2, xj)
		x[j] = fma32e(yq, minusDP3, xj)
		z[j] = float32(x[j] * x[j])
		q[j] = qj
	}
	for j := range 8 {
		zj := z[j]
		c := fma32x(fma32x(coscofP0, zj, coscofP1, &risk), zj, coscofP2, &risk)
		c = float32(c * zj)
		c = fma32x(c, zj, -float32(0.5*zj), &risk)
		c += 1
		s := fma32x(fma32x(sincofP0, zj, sincofP1, &risk), zj, sincofP2, &risk)
		s = float32(s * zj)
		s = fma32x(s, x[j], x[j], &risk)

		// Select and sign the results with masks, as sincos256_ps does.
		qj := q[j]
		swap := -uint32(qj >> 1 & 1) // all ones when q&2 != 0
		sb, cb := math.Float32bits(s), math.Float32bits(c)
		sinBits := sb&^swap | cb&swap
		cosBits := cb&^swap | sb&swap
		sinBits ^= uint32(qj&4) << 29
		cosBits ^= uint32(^(qj-2)&4) << 29
		sin[j] = math.Float32frombits(sinBits)
		cos[j] = math.Float32frombits(cosBits)
	}
	return risk
}
