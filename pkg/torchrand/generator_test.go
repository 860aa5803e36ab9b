package torchrand

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

func flat(t *tensors.Tensor) []float32 { return tensors.MustCopyFlatData[float32](t) }

func bitsOf(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, f := range v {
		b[i] = math.Float32bits(f)
	}
	return b
}

// TestMT19937Reference: std::mt19937 default-seeded (init_genrand(5489)) gives 4123659995 as its
// 10000th output (C++11 [rand.predef]); the first outputs are the reference implementation's.
func TestMT19937Reference(t *testing.T) {
	g := New(5489)
	first := []uint32{g.Random(), g.Random(), g.Random()}
	if want := []uint32{3499211612, 581869302, 3890346734}; !slices.Equal(first, want) {
		t.Errorf("first outputs %v, want %v", first, want)
	}
	var v uint32
	for i := 3; i < 10000; i++ {
		v = g.Random()
	}
	if v != 4123659995 {
		t.Errorf("10000th output %d, want 4123659995", v)
	}
	g.ManualSeed(5489)
	if got, want := g.Random64(), uint64(3499211612)<<32|581869302; got != want {
		t.Errorf("Random64 = %#x, want %#x (first output high)", got, want)
	}
}

// TestSeeds: only the low 32 bits of the seed count, negative seeds wrap.
func TestSeeds(t *testing.T) {
	tests := []struct{ a, b int64 }{
		{-1, 1<<32 - 1},
		{-5, 1<<32 - 5},
		{7, 1<<32 + 7},
		{12345678901, 12345678901 & (1<<32 - 1)},
		{math.MinInt64, 0},
	}
	for _, tc := range tests {
		x, y := flat(New(tc.a).Rand(50)), flat(New(tc.b).Rand(50))
		if !slices.Equal(x, y) {
			t.Errorf("seed %d and seed %d differ", tc.a, tc.b)
		}
	}
	if slices.Equal(flat(New(1).Rand(5)), flat(New(2).Rand(5))) {
		t.Error("seeds 1 and 2 give the same numbers")
	}
	if got := New(-1).InitialSeed(); got != 1<<32-1 {
		t.Errorf("New(-1).InitialSeed() = %d", got)
	}
}

// TestSpecVectors checks the numbers printed in specs/torch-rng.md and the seed documents
// (float32 values printed as float64 by .item(), or to 8 digits).
func TestSpecVectors(t *testing.T) {
	check := func(name string, got []float32, want []float64) {
		t.Helper()
		for i, w := range want {
			if math.Float32bits(got[i]) != math.Float32bits(float32(w)) {
				t.Errorf("%s[%d] = %.17g, want %.17g", name, i, got[i], w)
			}
		}
	}
	check("seed 123 rand(3, 2)", flat(New(123).Rand(3, 2)),
		[]float64{0.29611194133758545, 0.516562283039093, 0.2516707181930542, 0.6885567903518677})
	check("seed 0 randn(6, 6) row 0", flat(New(0).Randn(6, 6)),
		[]float64{-1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383, 0.8487103581428528, 0.6920091509819031})
	check("seed 7 randn(16)[11]", flat(New(7).Randn(16))[11:], []float64{-0.4601571559906006})
	check("seed 0 randn(3)", flat(New(0).Randn(3)), []float64{1.5409960746765137, -0.293428897857666, -2.1787893772125244})
	w, _ := New(123).Linear(5, 3, true)
	check("seed 123 Linear(5, 3).weight[0]", flat(w), []float64{-0.18236301839351654})
	g := New(789)
	q, _ := g.Linear(3, 2, false)
	check("seed 789 W_query", flat(q), []float64{0.31605908, 0.45680857, 0.51183486, -0.16828540, -0.33787704, -0.09177387})
	check("seed 123 Dropout(0.5) ones(6, 6) row 0", flat(New(123).Dropout(tensors.FromScalarAndDimensions(float32(1), 6, 6), 0.5)),
		[]float64{2, 2, 0, 2, 2, 0})
}

// TestNormalCache: only the small randn path reads and writes the cached normal value.
func TestNormalCache(t *testing.T) {
	g := New(0)
	a := append(flat(g.Randn(3)), flat(g.Randn(3))...)
	if b := flat(New(0).Randn(6)); !slices.Equal(a, b) {
		t.Errorf("randn(3), randn(3) = %v, want randn(6) = %v", a, b)
	}
	// randn(1), rand(1), randn(1): the second randn returns randn(2)[1], the cached value.
	g = New(123)
	first := flat(g.Randn(1))[0]
	g.Rand(1)
	second := flat(g.Randn(1))[0]
	if want := flat(New(123).Randn(2)); first != want[0] || second != want[1] {
		t.Errorf("randn(1), rand(1), randn(1) = %v, %v, want %v", first, second, want)
	}
	// The large path neither reads nor clears the cache; reseeding clears it.
	g = New(5)
	g.Randn(1)
	g.Randn(16)
	cached := flat(g.Randn(1))[0]
	if want := flat(New(5).Randn(2))[1]; cached != want {
		t.Errorf("cache after randn(16) = %v, want %v", cached, want)
	}
	g = New(5)
	g.Randn(1)
	g.ManualSeed(5)
	if got, want := flat(g.Randn(1))[0], flat(New(5).Randn(1))[0]; got != want {
		t.Errorf("ManualSeed did not clear the cache: %v, want %v", got, want)
	}
}

// TestTensorAndSliceForms: the tensor methods and the Fill methods draw the same numbers, and
// Clone continues the same stream.
func TestTensorAndSliceForms(t *testing.T) {
	for _, n := range []int{1, 15, 16, 17, 33, 700} {
		want := flat(New(9).Randn(n))
		got := make([]float32, n)
		New(9).FillRandn(got)
		if !slices.Equal(bitsOf(got), bitsOf(want)) {
			t.Errorf("FillRandn(%d) != Randn(%d)", n, n)
		}
		New(9).Normal(got, 0, 1)
		if !slices.Equal(bitsOf(got), bitsOf(want)) {
			t.Errorf("Normal(%d, 0, 1) != Randn(%d)", n, n)
		}
		want = flat(New(9).Rand(n))
		New(9).FillRand(got)
		if !slices.Equal(got, want) {
			t.Errorf("FillRand(%d) != Rand(%d)", n, n)
		}
		New(9).Uniform(got, 0, 1)
		if !slices.Equal(got, want) {
			t.Errorf("Uniform(%d, 0, 1) != Rand(%d)", n, n)
		}
		want = flat(New(9).DropoutMask(0.3, n))
		New(9).FillDropoutMask(got, 0.3)
		if !slices.Equal(got, want) {
			t.Errorf("FillDropoutMask(%d) != DropoutMask(%d)", n, n)
		}
	}
	g := New(3)
	g.Randn(1)
	c := g.Clone()
	if a, b := flat(g.Randn(5)), flat(c.Randn(5)); !slices.Equal(a, b) {
		t.Errorf("Clone diverged: %v vs %v", a, b)
	}
}

func TestShapes(t *testing.T) {
	tests := []struct {
		name  string
		t     *tensors.Tensor
		shape []int
	}{
		{"Rand()", New(0).Rand(), nil},
		{"Rand(0)", New(0).Rand(0), []int{0}},
		{"Rand(2, 0, 3)", New(0).Rand(2, 0, 3), []int{2, 0, 3}},
		{"Randn(2, 3, 4)", New(0).Randn(2, 3, 4), []int{2, 3, 4}},
		{"DropoutMask(0.5, 1, 2, 3, 3)", New(0).DropoutMask(0.5, 1, 2, 3, 3), []int{1, 2, 3, 3}},
	}
	for _, tc := range tests {
		if tc.t.DType() != dtypes.Float32 || !slices.Equal(tc.t.Shape().Dimensions, tc.shape) {
			t.Errorf("%s: shape %s, want float32%v", tc.name, tc.t.Shape(), tc.shape)
		}
	}
	w, b := New(0).Linear(4, 3, true)
	if !slices.Equal(w.Shape().Dimensions, []int{3, 4}) || !slices.Equal(b.Shape().Dimensions, []int{3}) {
		t.Errorf("Linear(4, 3, true) shapes %s, %s, want [3 4], [3]", w.Shape(), b.Shape())
	}
	if _, b := New(0).Linear(4, 3, false); b != nil {
		t.Errorf("Linear(4, 3, false) bias = %v, want nil", b)
	}
	// Empty tensors draw nothing.
	g := New(4)
	g.Rand(0)
	g.Randn(3, 0)
	g.DropoutMask(0.5, 0)
	if got, want := flat(g.Rand(2)), flat(New(4).Rand(2)); !slices.Equal(got, want) {
		t.Errorf("empty tensors drew numbers: %v, want %v", got, want)
	}
}

func TestDropoutEdges(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := tensors.FromFlatDataAndDimensions([]float32{-3, 0, 2.5, nan, inf, negZero}, 2, 3)
	tests := []struct {
		p    float64
		want []float32
	}{
		{0, []float32{-3, 0, 2.5, nan, inf, negZero}},
		{1, []float32{negZero, 0, 0, nan, nan, negZero}},
	}
	for _, tc := range tests {
		g := New(1)
		got := g.Dropout(x, tc.p)
		if !slices.Equal(got.Shape().Dimensions, []int{2, 3}) {
			t.Errorf("p=%g: shape %s", tc.p, got.Shape())
		}
		gb, wb := bitsOf(flat(got)), bitsOf(tc.want)
		for i := range gb {
			// NaN payloads aside, bit patterns must match (signs of zeros included).
			if gb[i] != wb[i] && !(math.IsNaN(float64(flat(got)[i])) && math.IsNaN(float64(tc.want[i]))) {
				t.Errorf("p=%g: [%d] = %g, want %g", tc.p, i, flat(got)[i], tc.want[i])
			}
		}
		if a, b := flat(g.Rand(2)), flat(New(1).Rand(2)); !slices.Equal(a, b) {
			t.Errorf("Dropout(p=%g) drew numbers", tc.p)
		}
	}
	ones := flat(New(1).DropoutMask(0, 4))
	zeros := flat(New(1).DropoutMask(1, 4))
	if !slices.Equal(ones, []float32{1, 1, 1, 1}) || !slices.Equal(zeros, []float32{0, 0, 0, 0}) {
		t.Errorf("DropoutMask p=0: %v, p=1: %v", ones, zeros)
	}
	// Kept values are float32(1)/float32(1-p): for p = 0.1 that is 1.1111112, not float32(1/0.9).
	mask := flat(New(123).DropoutMask(0.1, 100))
	for _, v := range mask {
		if v != 0 && v != float32(1)/float32(0.9) {
			t.Fatalf("DropoutMask(0.1) has %v", v)
		}
	}
}

// TestArgumentErrors: bad arguments panic with *ArgumentError naming function and argument.
func TestArgumentErrors(t *testing.T) {
	g := New(0)
	dst := make([]float32, 4)
	tests := []struct {
		want string
		fn   func()
	}{
		{"torchrand.Rand: dims[1] must be >= 0, got -1", func() { g.Rand(2, -1) }},
		{"torchrand.Randn: dims[0] must be >= 0, got -3", func() { g.Randn(-3) }},
		{"torchrand.Randn: dims [4611686018427387904 4] has too many elements", func() { g.Randn(1<<62, 4) }},
		{"torchrand.Rand: dims [1099511627776 1099511627776] has too many elements", func() { g.Rand(1<<40, 1<<40) }},
		{"torchrand.Rand: dims [1048576 1048576] has 1099511627776 elements, which need at least 4096.0 GiB: more than this machine's", func() { g.Rand(1<<20, 1<<20) }},
		{"torchrand.DropoutMask: dims [1048576 1048576 2] has 2199023255552 elements, which need at least 8192.0 GiB: more than this machine's", func() { g.DropoutMask(0.5, 1<<20, 1<<20, 2) }},
		{"torchrand.DropoutMask: dims[0] must be >= 0, got -2", func() { g.DropoutMask(0.5, -2) }},
		{"torchrand.Dropout: p must be in [0, 1], got NaN", func() { g.Dropout(tensors.FromValue([]float32{1}), math.NaN()) }},
		{"torchrand.Dropout: p must be in [0, 1], got 1.5", func() { g.Dropout(tensors.FromValue([]float32{1}), 1.5) }},
		{"torchrand.DropoutMask: p must be in [0, 1], got -0.1", func() { g.DropoutMask(-0.1, 2) }},
		{"torchrand.FillDropoutMask: p must be in [0, 1], got +Inf", func() { g.FillDropoutMask(dst, math.Inf(1)) }},
		{"torchrand.Dropout: x must be a float32 tensor, got nil", func() { g.Dropout(nil, 0.5) }},
		{"torchrand.Dropout: x must be a float32 tensor, got Float64", func() { g.Dropout(tensors.FromValue([]float64{1}), 0.5) }},
		{"torchrand.Linear: in must be > 0, got 0", func() { g.Linear(0, 3, true) }},
		{"torchrand.Linear: out must be > 0, got -1", func() { g.Linear(3, -1, false) }},
		{"torchrand.Uniform: from must be <= to, got from=1 > to=0", func() { g.Uniform(dst, 1, 0) }},
		{"torchrand.Uniform: from must be a finite float32, got NaN", func() { g.Uniform(dst, math.NaN(), 0) }},
		{"torchrand.Uniform: to must be a finite float32, got 1e+300", func() { g.Uniform(dst, 0, 1e300) }},
		{"torchrand.Uniform: to - from must fit in float32, got to=3e+38, from=-3e+38", func() { g.Uniform(dst, -3e38, 3e38) }},
		{"torchrand.Normal: std must be finite and >= 0, got -1", func() { g.Normal(dst, 0, -1) }},
		{"torchrand.Normal: mean must be finite, got NaN", func() { g.Normal(dst, math.NaN(), 1) }},
	}
	for _, tc := range tests {
		err := Catch(tc.fn)
		if err == nil {
			t.Errorf("no panic, want %q", tc.want)
			continue
		}
		// Messages naming this machine's memory are checked up to the number that varies.
		if err.Error() != tc.want && !(strings.HasSuffix(tc.want, "machine's") && strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("panic %q, want %q", err, tc.want)
		}
		var ae *ArgumentError
		if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &ae) || !strings.HasPrefix(tc.want, "torchrand."+ae.Func+": "+ae.Arg) {
			t.Errorf("%q: not an *ArgumentError matching ErrInvalidArgument with its Func and Arg", err)
		}
	}
	if err := Catch(func() { g.Rand(1) }); err != nil {
		t.Errorf("Catch of a normal call = %v", err)
	}
	// Other panics pass through Catch.
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("recovered %v, want the original panic", r)
		}
	}()
	_ = Catch(func() { panic("other") })
}

// TestLinearBound: the float64 kaiming formula rounds to the same float32 as 1/sqrt(in).
func TestLinearBound(t *testing.T) {
	for in := 1; in <= 100000; in++ {
		if float32(LinearBound(in)) != float32(1/math.Sqrt(float64(in))) {
			t.Fatalf("LinearBound(%d) = %v rounds differently from 1/sqrt(%d)", in, LinearBound(in), in)
		}
	}
}
