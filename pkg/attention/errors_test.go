package attention

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// zeros is a float32 tensor of zeros.
func zeros(dims ...int) *tensors.Tensor {
	return tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
}

// wantErr checks that err is an *ArgumentError (also through GoMLX's wrapping) whose message
// contains every fragment.
func wantErr(t *testing.T, label string, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", label)
		return
	}
	if testing.Verbose() {
		t.Logf("%s: %v", label, err)
	}
	var ae *ArgumentError
	if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &ae) {
		t.Errorf("%s: error %q is not an *ArgumentError", label, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: error %q does not mention %q", label, err, f)
		}
	}
}

// TestGraphFunctionErrors feeds every graph function bad shapes: building the graph panics with
// an *ArgumentError naming the function, the argument and the shapes, and GoMLX's Exec returns
// it as an error — nothing crashes, nothing is broadcast silently.
func TestGraphFunctionErrors(t *testing.T) {
	f := zeros
	bools := func(dims ...int) *tensors.Tensor { return tensors.FromShape(shapes.Make(dtypes.Bool, dims...)) }
	cases := []struct {
		name   string
		fn     func(in []*Node) *Node
		inputs []*tensors.Tensor
		want   []string
	}{
		{"DotScores width", func(in []*Node) *Node { return DotScores(in[0], in[1]) }, []*tensors.Tensor{f(3), f(6, 4)},
			[]string{"attention.DotScores: inputs", "[6, 4]", "[3]"}},
		{"DotScores rank", func(in []*Node) *Node { return DotScores(in[0], in[1]) }, []*tensors.Tensor{f(1, 3), f(6, 3)},
			[]string{"attention.DotScores: query", "rank must be 1"}},
		{"Scores width", func(in []*Node) *Node { return Scores(in[0], in[1]) }, []*tensors.Tensor{f(2, 3, 4), f(2, 5, 5)},
			[]string{"attention.Scores: keys", "[2, 5, 5]", "[2, 3, 4]"}},
		{"Scores batch", func(in []*Node) *Node { return Scores(in[0], in[1]) }, []*tensors.Tensor{f(2, 3, 4), f(3, 3, 4)},
			[]string{"attention.Scores", "[3, 3, 4]", "[2, 3, 4]"}},
		{"Scores rank", func(in []*Node) *Node { return Scores(in[0], in[1]) }, []*tensors.Tensor{f(2, 3, 4), f(3, 4)},
			[]string{"attention.Scores", "equal ranks"}},
		{"ContextVectors Tk", func(in []*Node) *Node { return ContextVectors(in[0], in[1]) }, []*tensors.Tensor{f(2, 3, 5), f(2, 4, 6)},
			[]string{"attention.ContextVectors: values", "[2, 4, 6]", "[2, 3, 5]"}},
		{"ScaleScores dk", func(in []*Node) *Node { return ScaleScores(in[0], 0) }, []*tensors.Tensor{f(2, 2)},
			[]string{"attention.ScaleScores: dk", "got 0"}},
		{"MaskFill stretch", func(in []*Node) *Node { return MaskFill(in[0], in[1], 0) }, []*tensors.Tensor{f(6, 6), bools(1, 6)},
			[]string{"attention.MaskFill: mask", "[1, 6]", "[6, 6]"}},
		{"MaskFill dtype", func(in []*Node) *Node { return MaskFill(in[0], in[1], 0) }, []*tensors.Tensor{f(6, 6), f(6, 6)},
			[]string{"attention.MaskFill: mask", "boolean"}},
		{"KeyMaskFill dims", func(in []*Node) *Node { return KeyMaskFill(in[0], in[1]) }, []*tensors.Tensor{f(2, 3, 4, 5), bools(2, 4)},
			[]string{"attention.KeyMaskFill: keyMask", "[2, 4]", "[2, 3, 4, 5]"}},
		{"Dropout broadcast", func(in []*Node) *Node { return Dropout(in[0], in[1]) }, []*tensors.Tensor{f(6, 6), f(1, 6)},
			[]string{"attention.Dropout: mask", "[1, 6]", "[6, 6]"}},
		{"SplitHeads divisible", func(in []*Node) *Node { return SplitHeads(in[0], 2) }, []*tensors.Tensor{f(2, 6, 5)},
			[]string{"attention.SplitHeads: x", "[2, 6, 5]", "not divisible by numHeads (2)"}},
		{"SplitHeads rank", func(in []*Node) *Node { return SplitHeads(in[0], 2) }, []*tensors.Tensor{f(6, 4)},
			[]string{"attention.SplitHeads: x", "rank must be 3"}},
		{"SplitHeadsNoTranspose divisible", func(in []*Node) *Node { return SplitHeadsNoTranspose(in[0], 3) }, []*tensors.Tensor{f(2, 6, 4)},
			[]string{"attention.SplitHeadsNoTranspose: x", "not divisible"}},
		{"MergeHeads rank", func(in []*Node) *Node { return MergeHeads(in[0]) }, []*tensors.Tensor{f(2, 6, 4)},
			[]string{"attention.MergeHeads: x", "rank must be 4"}},
		{"Linear width", func(in []*Node) *Node { return Linear(in[0], in[1], nil) }, []*tensors.Tensor{f(2, 3), f(4, 5)},
			[]string{"attention.Linear: x", "[2, 3]", "[4, 5]"}},
		{"Linear bias", func(in []*Node) *Node { return Linear(in[0], in[1], in[2]) }, []*tensors.Tensor{f(2, 5), f(4, 5), f(5)},
			[]string{"attention.Linear: bias", "want `[4]`"}},
		{"ScaledDotProduct Tk", func(in []*Node) *Node { o, _ := ScaledDotProduct(in[0], in[1], in[2]).Done(); return o },
			[]*tensors.Tensor{f(2, 3, 4), f(2, 5, 4), f(2, 6, 4)},
			[]string{"attention.ScaledDotProduct: v", "Tk=6 values", "has Tk=5 keys"}},
		{"ScaledDotProduct width", func(in []*Node) *Node { o, _ := ScaledDotProduct(in[0], in[1], in[2]).Done(); return o },
			[]*tensors.Tensor{f(2, 3, 4), f(2, 5, 3), f(2, 5, 4)},
			[]string{"attention.ScaledDotProduct: k", "key width 3", "query width 4"}},
		{"ScaledDotProduct dropout", func(in []*Node) *Node {
			o, _ := ScaledDotProduct(in[0], in[1], in[2]).DropoutMask(in[3]).Done()
			return o
		}, []*tensors.Tensor{f(2, 3, 4), f(2, 5, 4), f(2, 5, 4), f(2, 3, 3)},
			[]string{"attention.Dropout: mask", "[2, 3, 3]", "[2, 3, 5]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := make([]any, len(c.inputs))
			for i, x := range c.inputs {
				args[i] = x
			}
			_, err := CallOnce(testBackend(t), c.fn, args...)
			wantErr(t, c.name, err, c.want...)
		})
	}
}

// TestModuleErrors checks bad construction arguments (panics with *ArgumentError) and bad
// inputs to Call (returned errors), Forward (panics with the same error) and Apply (GoMLX's
// Exec returns the build panic).
func TestModuleErrors(t *testing.T) {
	g := torchrand.New(1)
	for _, c := range []struct {
		name string
		fn   func()
		want []string
	}{
		{"d_out % heads", func() { NewMultiHeadAttention(g, 6, 5, 3, 0.1, 2, false) }, []string{"NewMultiHeadAttention: dOut (5) must be divisible by numHeads (2)"}},
		{"dropout < 0", func() { NewMultiHeadAttention(g, 6, 6, 3, -0.1, 2, false) }, []string{"NewMultiHeadAttention: dropout must be in [0, 1], got -0.1"}},
		{"dropout > 1", func() { NewCausalAttention(g, 3, 2, 6, 1.5, false) }, []string{"NewCausalAttention: dropout", "got 1.5"}},
		{"dropout NaN", func() { NewMultiHeadAttentionWrapper(g, 3, 2, 6, math.NaN(), 2, false) }, []string{"dropout", "NaN"}},
		{"nil generator", func() { NewSelfAttentionV1(nil, 3, 2) }, []string{"NewSelfAttentionV1: g", "nil"}},
		{"zero width", func() { NewSelfAttentionV2(g, 0, 2, false) }, []string{"NewSelfAttentionV2: dIn must be > 0"}},
		{"cross heads", func() { NewCrossAttention(g, 3, 8, false) }, []string{"NewCrossAttention: embedDim (8) must be divisible by numHeads (3)"}},
		{"head list widths", func() {
			NewHeadList(g, Config{ContextSize: 8, EmbeddingDim: 12, HeadsNum: 3, HeadSize: 5})
		}, []string{"NewHeadList: cfg", "3·5", "EmbeddingDim (12)"}},
	} {
		wantErr(t, c.name, Catch(c.fn), c.want...)
	}

	mha := NewMultiHeadAttention(torchrand.New(2), 3, 4, 6, 0.5, 2, false)
	for _, c := range []struct {
		name string
		x    *tensors.Tensor
		want []string
	}{
		{"d_in", zeros(2, 6, 4), []string{"MultiHeadAttention.Call: x", "[2 6 4]", "d_in=3"}},
		{"context", zeros(2, 7, 3), []string{"MultiHeadAttention.Call: x", "7 tokens exceed context_length=6"}},
		{"rank", zeros(6, 3), []string{"MultiHeadAttention.Call: x", "rank must be 3"}},
		{"dtype", tensors.FromShape(shapes.Make(dtypes.Float64, 2, 6, 3)), []string{"MultiHeadAttention.Call: x", "Float32"}},
		{"empty", zeros(2, 0, 3), []string{"MultiHeadAttention.Call: x", "axis 1 must be > 0"}},
	} {
		_, err := mha.Call(c.x)
		wantErr(t, c.name, err, c.want...)
		wantErr(t, c.name+" (Forward)", Catch(func() { mha.Forward(c.x) }), c.want...)
	}
	// A rejected call draws no dropout mask: the generator is where construction left it.
	g1, g2 := torchrand.New(3), torchrand.New(3)
	m1 := NewMultiHeadAttention(g1, 3, 4, 6, 0.5, 2, false)
	NewMultiHeadAttention(g2, 3, 4, 6, 0.5, 2, false)
	if _, err := m1.Call(zeros(2, 9, 3)); err == nil {
		t.Fatal("no error for 9 tokens > context_length 6")
	}
	if a, b := flat(g1.Rand(4)), flat(g2.Rand(4)); !dimsEqual(f32sToInts(a), f32sToInts(b)) {
		t.Errorf("a rejected call moved the generator: %v vs %v", a, b)
	}

	cross := NewCrossAttention(torchrand.New(4), 2, 8, true)
	_, err := cross.Call(zeros(2, 5, 8), zeros(2, 7, 8), zeros(2, 6, 8), false)
	wantErr(t, "cross Tk", err, "CrossAttention.Call: v", "Tk=6 values", "Tk=7 keys")
	_, err = cross.Call(zeros(2, 5, 8), zeros(3, 7, 8), nil, false)
	wantErr(t, "cross batch", err, "CrossAttention.Call: k", "[3 7 8]", "[2 5 8]")

	// Apply inside a user graph: GoMLX's Exec returns the build panic.
	_, err = model.CallOnce(testBackend(t), mha.Store(), func(scope *model.Scope, x *Node) *Node {
		return mha.Apply(scope, x)
	}, zeros(1, 4, 5))
	wantErr(t, "Apply d_in", err, "MultiHeadAttention.Apply: x", "[1 4 5]", "d_in=3")
	_, err = model.CallOnce(testBackend(t), mha.Store(), func(scope *model.Scope, in []*Node) *Node {
		out, _, _ := mha.ApplyWithMasks(scope, in[0], in[1])
		return out
	}, zeros(1, 4, 3), zeros(1, 2, 4, 3))
	wantErr(t, "ApplyWithMasks shape", err, "MultiHeadAttention.Apply: masks[0]", "[1, 2, 4, 3]", "[1, 2, 4, 4]")

	// State dicts.
	sd := mha.StateDict()
	delete(sd, "out_proj.bias")
	wantErr(t, "missing key", mha.LoadStateDict(sd), "LoadStateDict", `misses key "out_proj.bias"`)
	sd = mha.StateDict()
	sd["W_query.weight"] = zeros(3, 4)
	wantErr(t, "wrong shape", mha.LoadStateDict(sd), `key "W_query.weight" has shape (Float32)[3, 4], want (Float32)[4, 3]`)
	sd = mha.StateDict()
	sd["mask"] = zeros(6, 6)
	wantErr(t, "extra key", mha.LoadStateDict(sd), `unexpected key "mask"`)
	wantErr(t, "unknown weight", Catch(func() { mha.Weight("W_query") }), `MultiHeadAttention.Weight: key "W_query" is not a parameter`)
}

func f32sToInts(v []float32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(math.Float32bits(x))
	}
	return out
}
