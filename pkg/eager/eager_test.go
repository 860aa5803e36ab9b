package eager

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// panicMessage runs fn and returns the message of the error it panics with ("" if none).
func panicMessage(t *testing.T, fn func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		err, ok := r.(error)
		if !ok {
			t.Errorf("panicked with %T %v, want an error value", r, r)
			msg = fmt.Sprint(r)
			return
		}
		msg = err.Error()
	}()
	fn()
	return ""
}

func TestErrors(t *testing.T) {
	f := func(dims ...int) *tensors.Tensor { return Zeros(dims...) }
	i := func(dims ...int) *tensors.Tensor { return Long(Zeros(dims...)) }
	tests := []struct {
		name string
		fn   func()
		want string // The message must start with this.
	}{
		{"matmul inner", func() { MatMul(f(6, 3), f(6, 3)) }, "eager.MatMul: a [6 3] and b [6 3]: inner dimensions 3 and 6 differ"},
		{"matmul 1-D sizes", func() { MatMul(f(3), f(4)) }, "eager.MatMul: a [3] and b [4]: 1-D sizes 3 and 4 differ"},
		{"matmul 0-d", func() { MatMul(f(), f(3)) }, "eager.MatMul: a [] and b [3]: both arguments need at least 1 dimension"},
		{"matmul batch", func() { MatMul(f(2, 3, 4), f(3, 4, 5)) }, "eager.MatMul: a [2 3 4] with batch dimensions [2] and b [3 4 5] with batch dimensions [3] don't broadcast"},
		{"matmul dtypes", func() { MatMul(i(3), f(3, 2)) }, "eager.MatMul: a [3] int64 and b [3 2] float32: dtypes differ"},
		{"matmul bool", func() { MatMul(Bool(f(2, 2)), Bool(f(2, 2))) }, "eager.MatMul: a [2 2] bool and b [2 2] bool: matrix products of bool"},
		{"matmul nil", func() { MatMul(nil, f(2)) }, "eager.MatMul: a is nil"},
		{"dot 2-D", func() { Dot(f(2, 3), f(3)) }, "eager.Dot: a [2 3] and b [3]: 1D tensors expected, but got 2D and 1D"},
		{"dot sizes", func() { Dot(f(2), f(3)) }, "eager.Dot: a [2] and b [3]: sizes 2 and 3 differ"},
		{"T 3-D", func() { T(f(2, 3, 4)) }, "eager.T: a [2 3 4] has 3 dimensions; .T is only defined for 2-D tensors: use eager.MT(a) to transpose the last two dimensions or eager.Permute(a, 2, 1, 0)"},
		{"transpose dim1", func() { Transpose(f(2, 3), 0, 3) }, "eager.Transpose: dim1=3 out of range for rank 2 (a is [2 3]; expected -2 to 1)"},
		{"transpose dim0 negative", func() { Transpose(f(2, 3), -3, 0) }, "eager.Transpose: dim0=-3 out of range for rank 2"},
		{"permute length", func() { Permute(f(2, 3), 0) }, "eager.Permute: a [2 3] has 2 dimensions but dims [0] has 1 entries"},
		{"permute repeated", func() { Permute(f(2, 3), 1, -1) }, "eager.Permute: dims [1 -1] repeats dimension 1"},
		{"view size", func() { View(Arange(12), 5, -1) }, "eager.View: cannot view [12] as [5 -1]"},
		{"view no -1", func() { View(Arange(12), 5, 2) }, "eager.View: cannot view [12] as [5 2]: 12 elements, not 10"},
		{"view two -1", func() { View(Arange(12), -1, -1) }, "eager.View: cannot view [12] as [-1 -1]: only one dimension can be inferred"},
		{"view negative", func() { View(Arange(12), -2, 6) }, "eager.View: cannot view [12] as [-2 6]: invalid dimension -2"},
		{"reshape name", func() { Reshape(Arange(12), 7) }, "eager.Reshape: cannot view [12] as [7]"},
		{"unsqueeze", func() { Unsqueeze(f(3), 2) }, "eager.Unsqueeze: dim=2 out of range for a [3] of rank 1 (expected -2 to 1)"},
		{"squeeze", func() { Squeeze(f(3), 1) }, "eager.Squeeze: dim=1 out of range for rank 1"},
		{"stack empty", func() { Stack(0) }, "eager.Stack: expects a non-empty list of tensors"},
		{"stack sizes", func() { Stack(0, f(3), f(4)) }, "eager.Stack: expects each tensor to be equal size, but got [3] at entry 0 and [4] at entry 1"},
		{"stack dim", func() { Stack(3, f(3), f(3)) }, "eager.Stack: dim=3 out of range for tensors [3] of rank 1 (expected -2 to 1)"},
		{"cat sizes", func() { Cat(1, f(2, 3), f(3, 3)) }, "eager.Cat: sizes of tensors must match except in dimension 1: ts[0] [2 3] and ts[1] [3 3] differ in dimension 0"},
		{"cat ranks", func() { Cat(0, f(2, 3), f(3)) }, "eager.Cat: tensors must have the same number of dimensions"},
		{"cat 0-d", func() { Cat(0, f(), f()) }, "eager.Cat: zero-dimensional tensor ts[0] cannot be concatenated"},
		{"index range", func() { Index(f(3, 2), 3) }, "eager.Index: index 3 is out of bounds for dimension 0 with size 3 (a is [3 2])"},
		{"index 0-d", func() { Index(f(), 0) }, "eager.Index: invalid index of a 0-dim tensor"},
		{"slice dim", func() { Slice(f(3, 2), 2, 0, 1) }, "eager.Slice: dim=2 out of range for rank 2"},
		{"add broadcast", func() { Add(f(2, 3), f(4)) }, "eager.Add: a [2 3] and b [4] don't broadcast: sizes 3 and 4 at dimension -1 differ and neither is 1"},
		{"mul broadcast", func() { Mul(f(6, 3), T(f(6, 3))) }, "eager.Mul: a [6 3] and b [3 6] don't broadcast"},
		{"sub bool", func() { Sub(Bool(f(2)), f(2)) }, "eager.Sub: a [2] bool: subtraction with a bool tensor is not supported"},
		{"sub scalar bool", func() { SubScalar(Bool(f(2)), 1) }, "eager.SubScalar: a [2] bool: subtraction with a bool tensor"},
		{"neg bool", func() { Neg(Bool(f(2))) }, "eager.Neg: a [2] is bool"},
		{"pow negative int", func() { PowScalar(i(2), -1) }, "eager.PowScalar: a [2] int64: integers to negative integer powers are not allowed"},
		{"softmax int", func() { Softmax(i(3), 0) }, "eager.Softmax: a [3] int64: softmax needs a floating-point tensor"},
		{"softmax dim", func() { Softmax(f(3), 1) }, "eager.Softmax: dim=1 out of range for rank 1"},
		{"sum dim", func() { Sum(f(2, 3), -3, false) }, "eager.Sum: dim=-3 out of range for rank 2"},
		{"mean int", func() { Mean(i(2, 3), 0, false) }, "eager.Mean: a [2 3] int64: mean needs a floating-point tensor"},
		{"max empty", func() { Max(f(0, 3), 0, false) }, "eager.Max: a [0 3] is empty"},
		{"masked_fill broadcast", func() { MaskedFill(f(2, 3), Bool(f(4)), 0) }, "eager.MaskedFill: a [2 3] and mask [4] don't broadcast"},
		{"masked_fill int inf", func() { MaskedFill(i(2), Bool(f(2)), math.Inf(-1)) }, "eager.MaskedFill: a [2] int64: value -Inf cannot be converted to int64"},
		{"triu rank", func() { Triu(f(3), 0) }, "eager.Triu: a [3]: input tensor must have at least 2 dimensions"},
		{"linear in", func() { Linear(f(2, 4), f(5, 3), nil) }, "eager.Linear: x [2 4] and weight [5 3]: x's last dimension 4 differs from in_features 3"},
		{"linear bias", func() { Linear(f(2, 3), f(5, 3), f(4)) }, "eager.Linear: x @ weight.T [2 5] and bias [4] don't broadcast"},
		{"linear weight rank", func() { Linear(f(3), f(3), nil) }, "eager.Linear: weight [3] must be 2-D"},
		{"item size", func() { Item(f(2)) }, "eager.Item: a [2] has 2 elements"},
		{"allclose broadcast", func() { AllClose(f(2), f(3), 1e-5, 1e-8) }, "eager.AllClose: a [2] and b [3] don't broadcast"},
		{"ones negative", func() { Ones(2, -1) }, "eager.Ones: dims [2 -1]: dimension 1 is negative"},
		{"arange negative", func() { Arange(-1) }, "eager.Arange: n=-1"},
		// Issue 14 (3): sizes that overflow or cannot fit used to give tensors holding 0 elements.
		{"zeros overflow", func() { Zeros(1<<40, 1<<40) }, "eager.Zeros: dims [1099511627776 1099511627776]: 1.21e+24 elements (about 2^80) are more than a tensor can hold (at most 2^63-1)"},
		{"ones overflow", func() { Ones(1<<62, 2, 2) }, "eager.Ones: dims [4611686018427387904 2 2]: 1.84e+19 elements (about 2^64) are more than a tensor can hold"},
		{"full overflow", func() { Full(0.25, 2, 1<<40, 1<<40) }, "eager.Full: dims [2 1099511627776 1099511627776]: 2.42e+24 elements (about 2^81)"},
		{"full memory", func() { Full(0.25, 1<<20, 1<<20) }, "eager.Full: dims [1048576 1048576]: 1099511627776 float32 elements need 4.0 TiB, more than this machine's"},
		{"zeros negative", func() { Zeros(3, -2) }, "eager.Zeros: dims [3 -2]: dimension 1 is negative (-2)"},
		{"arange memory", func() { Arange(1 << 50) }, "eager.Arange: n=1125899906842624: 1125899906842624 int64 elements need 8.0 PiB, more than this machine's"},
		{"broadcast memory", func() { Add(f(1<<20, 1), f(1, 1<<20)) }, "eager.Add: a [1048576 1] and b [1 1048576] broadcast to [1048576 1048576]: 1099511627776 elements need 1.0 TiB, more than this machine's"},
		{"matmul result memory", func() { MatMul(f(1<<20, 1), f(1, 1<<20)) }, "eager.MatMul: a [1048576 1] @ b [1 1048576]: the result [1048576 1048576]: 1099511627776 float32 elements need 4.0 TiB"},
		{"view wraps", func() { View(f(0, 2), 1<<32, 1<<32) }, "eager.View: cannot view [0 2] as [4294967296 4294967296]: the dimensions multiply past 2^63-1"},
		{"dtype", func() { Exp(tensors.FromValue([]uint8{1})) }, "eager.Exp: a [1] has dtype Uint8"},
		{"tensor type", func() { Tensor([]string{"a"}) }, "eager.Tensor: value of type []string"},
		{"tensor ragged", func() { Tensor([][]int{{1, 2}, {3}}) }, "eager.Tensor: value of type [][]int is not rectangular"},
		{"apply not func", func() { Apply(3, f(2)) }, "eager.Apply: fn is a int, want a func of *graph.Node"},
		{"apply arity", func() { Apply(graph.Neg, f(2), f(2)) }, "eager.Apply: fn func(*graph.Node) *graph.Node takes 1 inputs, got 2 tensors [[2] [2]]"},
		{"apply graph error", func() {
			Apply(func(x *graph.Node) *graph.Node { return graph.Reshape(x, 7) }, f(2))
		}, "eager.Apply: fn func(*graph.Node) *graph.Node on inputs [[2]]:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := panicMessage(t, tc.fn)
			if got == "" {
				t.Fatalf("no panic, want %q", tc.want)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("panic message\n  %s\nwant prefix\n  %s", got, tc.want)
			}
		})
	}
}

// TestValidationBeforeGraph: bad input must not reach (and compile) a graph.
func TestValidationBeforeGraph(t *testing.T) {
	before := CacheSize()
	panicMessage(t, func() { MatMul(Zeros(6, 3), Zeros(6, 3)) })
	panicMessage(t, func() { Add(Zeros(2, 3), Zeros(4)) })
	if after := CacheSize(); after != before {
		t.Errorf("cache grew from %d to %d on invalid calls", before, after)
	}
}

func TestCache(t *testing.T) {
	a := Reshape(Float(Arange(18)), 6, 3)
	b := T(a)
	s := MatMul(a, b)
	Softmax(s, -1)
	n := CacheSize()
	for range 5 {
		Softmax(MatMul(a, b), -1)
	}
	if CacheSize() != n {
		t.Errorf("repeated Softmax(MatMul [6 3]@[3 6]) grew the cache from %d to %d", n, CacheSize())
	}
	// New scalar values are inputs, not constants: no new compilations.
	mask := Bool(a)
	MulScalar(a, 2)
	MaskedFill(a, mask, 0)
	n = CacheSize()
	for _, s := range []float64{3, 4.5, -1, math.Inf(1)} {
		MulScalar(a, s)
		MaskedFill(a, mask, s)
	}
	if got := CacheSize(); got != n {
		t.Errorf("new scalar values compiled %d new graphs, want none", got-n)
	}
	// A new shape compiles once more.
	s4 := Slice(s, 1, 0, 4)
	n = CacheSize()
	Softmax(s4, -1)
	Softmax(s4, -1)
	if got := CacheSize(); got != n+1 {
		t.Errorf("a new shape compiled %d graphs, want 1", got-n)
	}
	// Small products are summed on the host (the exact path): they compile nothing.
	b5, a0, a1 := Slice(b, 1, 0, 5), Index(a, 0), Index(a, 1)
	n = CacheSize()
	MatMul(a, b5)
	Linear(a, a, nil)
	Dot(a0, a1)
	if got := CacheSize(); got != n {
		t.Errorf("small products compiled %d graphs, want none", got-n)
	}
}

func TestApply(t *testing.T) {
	x := Tensor([]float64{1, -2, 3})
	out := Apply(graph.Neg, x)
	if got := flat(out[0]); !slices.Equal(got, []float64{-1, 2, -3}) {
		t.Errorf("Apply(graph.Neg) = %v", got)
	}
	// Several outputs, slice input.
	outs := Apply(func(xs []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.Add(xs[0], xs[1]), graph.Mul(xs[0], xs[1])}
	}, x, x)
	if len(outs) != 2 || !slices.Equal(flat(outs[1]), []float64{1, 4, 9}) {
		t.Errorf("Apply with two outputs = %v", outs)
	}
	// Closures from one func literal capturing different values must not share a graph.
	scale := func(s float64) func(*graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return graph.MulScalar(x, s) }
	}
	two, ten := scale(2), scale(10)
	if got := flat(Apply(two, x)[0]); !slices.Equal(got, []float64{2, -4, 6}) {
		t.Errorf("Apply(scale(2)) = %v", got)
	}
	if got := flat(Apply(ten, x)[0]); !slices.Equal(got, []float64{10, -20, 30}) {
		t.Errorf("Apply(scale(10)) = %v (reused the scale(2) graph?)", got)
	}
	// The same closure value is compiled once.
	n := CacheSize()
	Apply(two, x)
	Apply(two, x)
	if CacheSize() != n {
		t.Errorf("re-applying the same closure grew the cache")
	}
	// ApplyNamed shares one compilation across fresh closures with the same name.
	for range 3 {
		ApplyNamed("triple", func(x *graph.Node) *graph.Node { return graph.MulScalar(x, 3) }, x)
	}
	if CacheSize() != n+1 {
		t.Errorf("ApplyNamed with one name compiled %d times", CacheSize()-n)
	}
	if got := flat(ApplyNamed("triple", graph.Neg, x)[0]); !slices.Equal(got, []float64{3, -6, 9}) {
		t.Errorf("ApplyNamed reuses the first graph under a name: got %v", got)
	}
}

// TestConcurrent: notebooks and tests may call eager operations from several goroutines.
func TestConcurrent(t *testing.T) {
	a := Reshape(Float(Arange(12)), 3, 4)
	want := flat(MatMul(a, T(a)))
	done := make(chan []float64)
	for g := range 8 {
		go func() {
			x := Reshape(Float(Arange(12)), 3, 4)
			var got []float64
			for range 20 {
				got = flat(MatMul(x, T(x)))
				_ = Softmax(AddScalar(x, float64(g)), -1)
			}
			done <- got
		}()
	}
	for range 8 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent MatMul = %v, want %v", got, want)
		}
	}
}

func TestTensor(t *testing.T) {
	cases := []struct {
		value any
		dtype dtypes.DType
		dims  []int
		flat  []float64
	}{
		{[][]float64{{0.43, 0.15}, {1, 2}}, dtypes.Float32, []int{2, 2}, []float64{float64(float32(0.43)), float64(float32(0.15)), 1, 2}},
		{[]int{1, 2, 3}, dtypes.Int64, []int{3}, []float64{1, 2, 3}},
		{[]bool{true, false}, dtypes.Bool, []int{2}, []float64{1, 0}},
		{2.5, dtypes.Float32, nil, []float64{2.5}},
		{[][]int{}, dtypes.Int64, []int{0}, nil},
		{[]float32{1.5}, dtypes.Float32, []int{1}, []float64{1.5}},
	}
	for _, c := range cases {
		got := Tensor(c.value)
		if got.DType() != c.dtype || !slices.Equal(got.Shape().Dimensions, c.dims) && len(c.dims)+got.Rank() > 0 ||
			!slices.Equal(flat(got), c.flat) {
			t.Errorf("Tensor(%#v) = %s %v, want %s %v %v", c.value, got.Shape(), flat(got), c.dtype, c.dims, c.flat)
		}
	}
}

func TestIdentities(t *testing.T) {
	a := Reshape(Float(Arange(6)), 2, 3)
	for name, got := range map[string]*tensors.Tensor{
		"Contiguous": Contiguous(a), "View same": View(a, 2, -1), "Permute id": Permute(a, 0, 1),
		"Transpose same": Transpose(a, 1, -1), "Squeeze non-1": Squeeze(a, 0), "Float": Float(a),
		"Slice all": Slice(a, 1, -100, 100), "T 1-D": T(Index(a, 0)), "Index": Index(a, 0),
	} {
		if name == "T 1-D" || name == "Index" {
			continue
		}
		if got != a {
			t.Errorf("%s returned a new tensor, want its argument (PyTorch returns self)", name)
		}
	}
	if x := Index(a, 0); T(x) != x {
		t.Errorf("T of a 1-D tensor should return it unchanged")
	}
}

func TestEmpty(t *testing.T) {
	a := Reshape(Float(Arange(6)), 2, 3)
	e := Slice(a, 1, 2, 1)
	if !slices.Equal(Shape(e), []int{2, 0}) {
		t.Fatalf("empty slice shape %v", Shape(e))
	}
	if got := Shape(Cat(1, e, a, e)); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("Cat with empty parts: %v", got)
	}
	if got := Shape(Sum(e, 1, false)); !slices.Equal(got, []int{2}) || !slices.Equal(flat(Sum(e, 1, false)), []float64{0, 0}) {
		t.Errorf("Sum over an empty dimension: %v %v", got, flat(Sum(e, 1, false)))
	}
	if got := Shape(MatMul(e, Slice(T(a), 0, 0, 0))); !slices.Equal(got, []int{2, 2}) {
		t.Errorf("MatMul over an empty inner dimension: %v", got)
	}
	if got := flat(MatMul(e, Slice(T(a), 0, 0, 0))); !slices.Equal(got, []float64{0, 0, 0, 0}) {
		t.Errorf("MatMul over an empty inner dimension = %v, want zeros", got)
	}
	if Item(SumAll(Arange(0))) != 0 {
		t.Errorf("SumAll of an empty tensor should be 0")
	}
}

// TestDTypePromotion checks PyTorch's result_type rules on a few operations.
func TestDTypePromotion(t *testing.T) {
	i := Tensor([]int{1, 2})
	f := Tensor([]float64{1, 2})
	b := Tensor([]bool{true, false})
	f64 := tensors.FromScalar(1.5)
	tests := []struct {
		name string
		got  *tensors.Tensor
		want dtypes.DType
	}{
		{"int+int", Add(i, i), dtypes.Int64},
		{"int+float", Add(i, f), dtypes.Float32},
		{"int/int", Div(i, i), dtypes.Float32},
		{"bool+int", Add(b, i), dtypes.Int64},
		{"bool+bool", Add(b, b), dtypes.Bool},
		{"float32+0-d float64", Add(f, f64), dtypes.Float32},
		{"int+0-d float64", Add(i, f64), dtypes.Float64},
		{"int*2", MulScalar(i, 2), dtypes.Int64},
		{"int*0.5", MulScalar(i, 0.5), dtypes.Float32},
		{"bool*2", MulScalar(b, 2), dtypes.Int64},
		{"int/2", DivScalar(i, 2), dtypes.Float32},
		{"exp(int)", Exp(i), dtypes.Float32},
		{"sum(bool)", SumAll(b), dtypes.Int64},
		{"stack(int, float)", Stack(0, i, f), dtypes.Float32},
		{"eq", Eq(i, 1), dtypes.Bool},
		{"argmax", ArgMax(f, 0, false), dtypes.Int64},
	}
	for _, tc := range tests {
		if tc.got.DType() != tc.want {
			t.Errorf("%s: dtype %s, want %s", tc.name, tc.got.DType(), tc.want)
		}
	}
}
