package attention

import (
	"math"
	"testing"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
)

// TestSoftmaxOverflow documents why the naive softmax is not used: exp(89) is +Inf in float32
// (backend.Exp, as PyTorch; the SIMD graph.Exp clamps),
// so a score of 89 turns its row into NaN (Inf/Inf) and zeros, while the stable softmax is fine.
func TestSoftmaxOverflow(t *testing.T) {
	big := golden(t, "overflow/scores") // [89, 1, 2]
	exp := run(t, func(in []*Node) *Node { return backend.Exp(in[0]) }, big)
	assertGolden(t, "overflow/exp", exp)
	if e := flat(exp)[0]; !math.IsInf(float64(e), 1) {
		t.Errorf("exp(89) = %v in float32, want +Inf", e)
	}
	naive := run(t, func(in []*Node) *Node { return NaiveSoftmax(in[0]) }, big)
	assertGolden(t, "overflow/naive", naive)
	if n := flat(naive); !math.IsNaN(float64(n[0])) || n[1] != 0 || n[2] != 0 {
		t.Errorf("NaiveSoftmax([89 1 2]) = %v, want [NaN 0 0]", n)
	}
	stable := run(t, func(in []*Node) *Node { return StableSoftmax(in[0]) }, big)
	assertGolden(t, "overflow/stable", stable)
	if s := flat(stable); s[0] != 1 {
		t.Errorf("StableSoftmax([89 1 2]) = %v, want [1 ~0 ~0]", s)
	}
	// The edge: exp(88.7) is still finite, exp(88.8) is not.
	assertGolden(t, "overflow/exp88", run(t, func(in []*Node) *Node { return backend.Exp(in[0]) }, tensors.FromValue([]float32{88, 88.7, 88.8})))
	for _, c := range []struct {
		score float32
		nan   bool
	}{{88, false}, {88.7, false}, {89, true}, {1000, true}} {
		n := flat(run(t, func(in []*Node) *Node { return NaiveSoftmax(in[0]) }, tensors.FromValue([]float32{c.score, 0})))
		if math.IsNaN(float64(n[0])) != c.nan {
			t.Errorf("NaiveSoftmax([%v 0]) = %v, NaN expected: %v", c.score, n, c.nan)
		}
		s := flat(run(t, func(in []*Node) *Node { return StableSoftmax(in[0]) }, tensors.FromValue([]float32{c.score, 0})))
		if math.IsNaN(float64(s[0])) || math.Abs(float64(s[0]+s[1])-1) > 1e-6 {
			t.Errorf("StableSoftmax([%v 0]) = %v, want a distribution", c.score, s)
		}
	}
}

// TestSplitMergeHeads checks the head layout: head h of token t holds x[b, t, h·hs:(h+1)·hs],
// MergeHeads inverts SplitHeads, and SplitHeadsNoTranspose does not.
func TestSplitMergeHeads(t *testing.T) {
	const b, tk, d, h = 2, 3, 8, 4
	hs := d / h
	data := make([]float32, b*tk*d)
	for i := range data {
		data[i] = float32(i)
	}
	x := tensors.FromFlatDataAndDimensions(data, b, tk, d)
	split := run(t, func(in []*Node) *Node { return SplitHeads(in[0], h) }, x)
	if got := split.Shape().Dimensions; !dimsEqual(got, []int{b, h, tk, hs}) {
		t.Fatalf("SplitHeads shape %v, want [B H T hs] = %v", got, []int{b, h, tk, hs})
	}
	s := flat(split)
	for bi := range b {
		for hi := range h {
			for ti := range tk {
				for j := range hs {
					if got, want := s[((bi*h+hi)*tk+ti)*hs+j], data[(bi*tk+ti)*d+hi*hs+j]; got != want {
						t.Fatalf("SplitHeads[%d,%d,%d,%d] = %v, want x[%d,%d,%d] = %v", bi, hi, ti, j, got, bi, ti, hi*hs+j, want)
					}
				}
			}
		}
	}
	assertClose(t, "MergeHeads(SplitHeads(x))", run(t, func(in []*Node) *Node { return MergeHeads(SplitHeads(in[0], h)) }, x), x, 0)
	wrong := flat(run(t, func(in []*Node) *Node { return SplitHeadsNoTranspose(in[0], h) }, x))
	if wrong[hs] == s[hs] { // head 0, token 1
		t.Errorf("SplitHeadsNoTranspose agrees with SplitHeads on head 0, token 1")
	}
	if wrong[hs] != data[hs] { // it is token 0's second chunk
		t.Errorf("SplitHeadsNoTranspose[0,0,1,0] = %v, want x[0,0,%d] = %v", wrong[hs], hs, data[hs])
	}
}

// TestCausalBothWays checks that zeroing future weights and renormalizing equals the softmax of
// -Inf-filled scores, for self attention and for a rectangular (cross) score matrix.
func TestCausalBothWays(t *testing.T) {
	g := torchrand.New(3)
	for _, dims := range [][]int{{2, 3, 5, 5}, {4, 4}, {2, 3, 6}} {
		scores := g.Randn(dims...)
		a := run(t, func(in []*Node) *Node { return CausalRenormalize(StableSoftmax(in[0])) }, scores)
		b := run(t, func(in []*Node) *Node { return StableSoftmax(CausalMaskFill(in[0])) }, scores)
		assertClose(t, "CausalRenormalize vs CausalMaskFill", a, b, 1e-6)
		// Row i has exactly i+1 non-zero weights (j <= i) and sums to 1.
		w := flat(b)
		tq, tk := dims[len(dims)-2], dims[len(dims)-1]
		for r := 0; r < len(w)/tk; r++ {
			i := r % tq
			sum := 0.0
			for j := range tk {
				v := w[r*tk+j]
				sum += float64(v)
				if (j > i) != (v == 0) {
					t.Fatalf("dims %v: weight[row %d, key %d] = %v; future keys must be 0, others > 0", dims, i, j, v)
				}
			}
			if math.Abs(sum-1) > 1e-6 {
				t.Fatalf("dims %v: row %d sums to %v", dims, r, sum)
			}
		}
	}
}

// TestKeyMaskFill checks padding masks: padded keys get weight 0, rows still sum to 1, and the
// mask is per example.
func TestKeyMaskFill(t *testing.T) {
	g := torchrand.New(4)
	q, k, v := g.Randn(2, 2, 3, 4), g.Randn(2, 2, 5, 4), g.Randn(2, 2, 5, 6)
	keyMask := tensors.FromValue([][]bool{{true, true, true, false, false}, {true, false, true, true, true}})
	outs := runN(t, func(in []*Node) []*Node {
		out, w := ScaledDotProduct(in[0], in[1], in[2]).KeyMask(in[3]).Done()
		return []*Node{out, w}
	}, q, k, v, keyMask)
	out, w := outs[0], outs[1]
	if got := out.Shape().Dimensions; !dimsEqual(got, []int{2, 2, 3, 6}) {
		t.Errorf("output shape %v, want [2 2 3 6]", got)
	}
	ws := flat(w)
	mask := [][]bool{{true, true, true, false, false}, {true, false, true, true, true}}
	for r := 0; r < len(ws)/5; r++ {
		b := r / 6
		sum := 0.0
		for j := range 5 {
			sum += float64(ws[r*5+j])
			if !mask[b][j] && ws[r*5+j] != 0 {
				t.Errorf("example %d: padded key %d has weight %v", b, j, ws[r*5+j])
			}
			if mask[b][j] && ws[r*5+j] == 0 {
				t.Errorf("example %d: real key %d has weight 0", b, j)
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("row %d sums to %v", r, sum)
		}
	}
}

// TestScaledDotProductCross checks cross attention (Tq != Tk) against the step-by-step
// functions, the causal rectangular mask, and that ScaleQueries agrees to rounding.
func TestScaledDotProductCross(t *testing.T) {
	g := torchrand.New(5)
	q, k, v := g.Randn(2, 3, 4, 8), g.Randn(2, 3, 7, 8), g.Randn(2, 3, 7, 5)
	steps := func(causal bool) func(in []*Node) *Node {
		return func(in []*Node) *Node {
			s := Scores(in[0], in[1])
			if causal {
				s = CausalMaskFill(s)
			}
			return ContextVectors(StableSoftmax(ScaleScores(s, 8)), in[2])
		}
	}
	for _, causal := range []bool{false, true} {
		want := run(t, steps(causal), q, k, v)
		got := run(t, func(in []*Node) *Node {
			out, _ := ScaledDotProduct(in[0], in[1], in[2]).Causal(causal).Done()
			return out
		}, q, k, v)
		if d := got.Shape().Dimensions; !dimsEqual(d, []int{2, 3, 4, 5}) {
			t.Fatalf("output shape %v, want [2 3 4 5]", d)
		}
		assertClose(t, "ScaledDotProduct", got, want, 0)
		fast := run(t, func(in []*Node) *Node {
			out, _ := ScaledDotProduct(in[0], in[1], in[2]).Causal(causal).ScaleQueries(true).Done()
			return out
		}, q, k, v)
		assertClose(t, "ScaledDotProduct.ScaleQueries", fast, want, 1e-5)
	}
}

// TestDropoutGraph checks the graph side of dropout against nn.Dropout: x·mask with PyTorch's
// mask equals torch's dropout output, and kept values are scaled by float32(1)/float32(1-p).
func TestDropoutGraph(t *testing.T) {
	x := golden(t, "s000/walk/weights")
	mask := golden(t, "s000/walk/dropout_mask")
	assertGolden(t, "s000/walk/dropped", run(t, func(in []*Node) *Node { return Dropout(in[0], in[1]) }, x, mask))
	scale := float32(1) / float32(1-0.1)
	for i, m := range flat(mask) {
		if m != 0 && m != scale {
			t.Fatalf("mask[%d] = %v, want 0 or %v", i, m, scale)
		}
	}
}

// TestStableSoftmaxLarge: above 2^14 elements StableSoftmax is GoMLX's fused softmax; it must
// match a float64 softmax within 1e-6 (masked rows included: -Inf → exactly 0), and its
// gradient must equal the small path's (computed row block by row block under the threshold).
func TestStableSoftmaxLarge(t *testing.T) {
	const b, h, tk = 2, 4, 128 // 131072 elements > 2^14; each [tk, tk] slice 2^14: the exact path
	g := torchrand.New(7)
	x := g.Randn(b, h, tk, tk)
	masked := run(t, func(in []*Node) *Node { return CausalMaskFill(ScaleScores(in[0], 16)) }, x)
	got := flat(run(t, func(in []*Node) *Node { return StableSoftmax(in[0]) }, masked))
	m := flat(masked)
	for r := 0; r < b*h*tk; r++ {
		row := m[r*tk : (r+1)*tk]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - mx)
		}
		for i, v := range row {
			want := math.Exp(float64(v)-mx) / sum
			if d := math.Abs(float64(got[r*tk+i]) - want); d > 1e-6 || (math.IsInf(float64(v), -1) && got[r*tk+i] != 0) {
				t.Fatalf("row %d col %d: StableSoftmax = %v, float64 softmax %v", r, i, got[r*tk+i], want)
			}
		}
	}

	// d/dx Σ softmax(x)·w through the large path and through the small one (each [1, 1, T, T]
	// slice is 16384 elements).
	w := g.Randn(b, h, tk, tk)
	grad := func(in []*Node) *Node {
		return Gradient(ReduceAllSum(Mul(StableSoftmax(in[0]), in[1])), in[0])[0]
	}
	large := flat(run(t, grad, masked, w))
	small := flat(run(t, func(in []*Node) *Node {
		var parts []*Node
		for i := range b {
			for j := range h {
				xs := Slice(in[0], AxisElem(i), AxisElem(j))
				ws := Slice(in[1], AxisElem(i), AxisElem(j))
				parts = append(parts, Gradient(ReduceAllSum(Mul(StableSoftmax(xs), ws)), xs)[0])
			}
		}
		return Reshape(Concatenate(parts, 0), b, h, tk, tk)
	}, masked, w))
	for i := range large {
		if d := math.Abs(float64(large[i] - small[i])); d > 1e-6 {
			t.Fatalf("gradient %d: large path %v, small path %v", i, large[i], small[i])
		}
	}
}
