package attention

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
)

// The KV-cache and GQA goldens are PyTorch 1.13's numbers written by testdata/gen_gqa_goldens.py
// (the book's bonus classes); `go test -update` regenerates them with goldens.json.
const gqaGoldensPath = "testdata/gqa_goldens.json"

// referenceBLAS is Debian's reference BLAS, which the seeds' PyTorch numbers come from; put first
// on the script's library path, it wins over OpenBLAS where that is the system's libblas.so.3.
const referenceBLAS = "/usr/lib/x86_64-linux-gnu/blas"

var (
	gqaOnce    sync.Once
	gqaGoldens goldenFile
	gqaErr     error
)

// gqaGolden returns the golden tensor name of gqa_goldens.json.
func gqaGolden(t testing.TB, name string) *tensors.Tensor {
	t.Helper()
	gqaOnce.Do(func() {
		if *update {
			cmd := exec.Command("/usr/bin/python3", "testdata/gen_gqa_goldens.py")
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+referenceBLAS+string(os.PathListSeparator)+os.Getenv("LD_LIBRARY_PATH"))
			out, err := cmd.Output()
			if err != nil {
				gqaErr = fmt.Errorf("gen_gqa_goldens.py: %w", err)
				return
			}
			if gqaErr = os.WriteFile(gqaGoldensPath, out, 0o644); gqaErr != nil {
				return
			}
		}
		b, err := os.ReadFile(gqaGoldensPath)
		if err != nil {
			gqaErr = err
			return
		}
		gqaErr = json.Unmarshal(b, &gqaGoldens)
	})
	if gqaErr != nil {
		t.Fatalf("loading %s: %v", gqaGoldensPath, gqaErr)
	}
	g, ok := gqaGoldens.Tensors[name]
	if !ok {
		t.Fatalf("no golden %q in %s", name, gqaGoldensPath)
	}
	data := make([]float32, len(g.Data))
	for i, v := range g.Data {
		data[i] = float32(v)
	}
	return tensors.FromFlatDataAndDimensions(data, g.Shape...)
}

// within fails unless got has want's shape and every value within tol of it; it returns the
// largest difference.
func within(t *testing.T, label string, got, want *tensors.Tensor, tol float64) float64 {
	t.Helper()
	if !slices.Equal(got.Shape().Dimensions, want.Shape().Dimensions) {
		t.Errorf("%s: shape %s, want %s", label, got.Shape(), want.Shape())
		return math.Inf(1)
	}
	worst := 0.0
	g, w := flat(got), flat(want)
	for i := range g {
		worst = max(worst, math.Abs(float64(g[i])-float64(w[i])))
	}
	if worst > tol {
		t.Errorf("%s: differs from PyTorch by up to %g, want <= %g\n got %v\nwant %v", label, worst, tol, g, w)
	}
	return worst
}

// TestKVCacheSmallExample: the seeds' CausalAttention (seed 123, 3 → 2) on "Your journey starts
// with one step", one token at a time against the keys and values cached so far, gives exactly the
// full-context outputs, as the book's cached class does in PyTorch; both within 1e-6 of PyTorch's
// (the float32 exp of the softmax differs from PyTorch's by an ulp here and there).
func TestKVCacheSmallExample(t *testing.T) {
	ca := NewCausalAttention(torchrand.New(123), 3, 2, 6, 0.0, false)
	for _, k := range []string{"W_query", "W_key", "W_value"} {
		within(t, k, ca.Weight(k+".weight"), gqaGolden(t, "kv/"+k), 0)
	}
	x := tensors.FromValue([][]float32{
		{0.43, 0.15, 0.89}, {0.55, 0.87, 0.66}, {0.57, 0.85, 0.64},
		{0.22, 0.58, 0.33}, {0.77, 0.25, 0.10}, {0.05, 0.80, 0.55},
	})
	full := ca.Forward(tensors.FromFlatDataAndDimensions(flat(x), 1, 6, 3)) // [1, 6, 2]
	within(t, "full", full, reshapeGolden(gqaGolden(t, "kv/full"), 1, 6, 2), 1e-6)
	wq, wk, wv := ca.Weight("W_query.weight"), ca.Weight("W_key.weight"), ca.Weight("W_value.weight")
	var steps []float32
	for i := range 6 {
		out := run(t, func(in []*Node) *Node {
			xs := Reshape(Slice(in[0], AxisRange(0, i+1)), 1, 1, i+1, 3) // [1, 1, i+1, 3]: the tokens so far
			q := Linear(Slice(xs, AxisRange(), AxisRange(), AxisElem(i)), in[1], nil)
			k, v := Linear(xs, in[2], nil), Linear(xs, in[3], nil) // [1, 1, i+1, 2]: the cache
			ctx, _ := GroupedQueryCausal(q, k, v)                  // [1, 1, 1, 2]
			return Reshape(ctx, 2)
		}, x, wq, wk, wv)
		steps = append(steps, flat(out)...)
	}
	within(t, "cached steps", tensors.FromFlatDataAndDimensions(steps, 6, 2), gqaGolden(t, "kv/steps"), 1e-6)
	// Exactly equal: here, and in PyTorch.
	within(t, "cached steps = full", tensors.FromFlatDataAndDimensions(steps, 6, 2), reshapeGolden(full, 6, 2), 0)
	within(t, "PyTorch's cached steps = its full path", gqaGolden(t, "kv/steps"), gqaGolden(t, "kv/full"), 0)
}

func reshapeGolden(t *tensors.Tensor, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(flat(t), dims...)
}

// TestGroupedQueryAttention: the book's GroupedQueryAttention(8, 8, 6, 0.0, 4, num_kv_groups)
// after torch.manual_seed(123), for GQA (2 key/value heads), MQA (1) and MHA (4): the same
// weights, the module's forward within 1e-6, GroupedQueryCausal (no repeated keys) within 1e-6 of
// it, and the cached one-token steps of PyTorch's module within 1e-6.
func TestGroupedQueryAttention(t *testing.T) {
	x := gqaGolden(t, "gqa/x") // [2, 6, 8]
	for _, tc := range []struct {
		name   string
		groups int
	}{{"gqa", 2}, {"mqa", 1}, {"mha", 4}} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewGroupedQueryAttention(torchrand.New(123), 8, 8, 6, 0.0, 4, tc.groups, false)
			m.Eval()
			if got, want := m.ParamNames(), []string{"W_key.weight", "W_value.weight", "W_query.weight", "out_proj.weight", "out_proj.bias"}; !slices.Equal(got, want) {
				t.Errorf("parameters %v, want %v", got, want)
			}
			for _, k := range m.ParamNames() {
				within(t, k, m.Weight(k), gqaGolden(t, tc.name+"/"+k), 0)
			}
			if got := m.Weight("W_key.weight").Shape().Dimensions; !slices.Equal(got, []int{2 * tc.groups, 8}) {
				t.Errorf("W_key %v, want [%d 8]: %d key/value heads of 2", got, 2*tc.groups, tc.groups)
			}
			want := gqaGolden(t, tc.name+"/out")
			t.Logf("module: %g", within(t, "module", m.Forward(x), want, 1e-6))
			w := func(k string) *tensors.Tensor { return m.Weight(k) }
			proj := func(in []*Node) (q, k, v *Node) {
				q = SplitHeads(Linear(in[0], in[1], nil), 4)         // [2, 4, 6, 2]
				k = SplitHeads(Linear(in[0], in[2], nil), tc.groups) // [2, Hkv, 6, 2]
				v = SplitHeads(Linear(in[0], in[3], nil), tc.groups) // [2, Hkv, 6, 2]
				return
			}
			args := []*tensors.Tensor{x, w("W_query.weight"), w("W_key.weight"), w("W_value.weight"), w("out_proj.weight"), w("out_proj.bias")}
			got := run(t, func(in []*Node) *Node {
				q, k, v := proj(in)
				ctx, _ := GroupedQueryCausal(q, k, v)
				return Linear(MergeHeads(ctx), in[4], in[5])
			}, args...)
			t.Logf("GroupedQueryCausal: %g", within(t, "GroupedQueryCausal", got, want, 1e-6))
			// One token at a time against the cache, as PyTorch's module with use_cache=True.
			var steps []*tensors.Tensor
			for i := range 6 {
				steps = append(steps, run(t, func(in []*Node) *Node {
					q, k, v := proj(in)
					q = Slice(q, AxisRange(), AxisRange(), AxisElem(i))                                                                 // [2, 4, 1, 2]
					k, v = Slice(k, AxisRange(), AxisRange(), AxisRange(0, i+1)), Slice(v, AxisRange(), AxisRange(), AxisRange(0, i+1)) // [2, Hkv, i+1, 2]
					ctx, _ := GroupedQueryCausal(q, k, v)
					return Linear(MergeHeads(ctx), in[4], in[5]) // [2, 1, 8]
				}, args...))
			}
			stepped := run(t, func(in []*Node) *Node { return Concatenate(in, 1) }, steps...)
			t.Logf("cached steps: %g", within(t, "cached steps", stepped, gqaGolden(t, tc.name+"/steps"), 1e-6))
		})
	}
}

// TestRepeatKV: head h of the result is head h / groupSize of the input, torch's
// repeat_interleave(groupSize, dim=1).
func TestRepeatKV(t *testing.T) {
	x := tensors.FromFlatDataAndDimensions([]float32{10, 11, 20, 21}, 1, 2, 1, 2) // [B=1, Hkv=2, T=1, hs=2]
	for _, tc := range []struct {
		group int
		want  []float32
	}{
		{1, []float32{10, 11, 20, 21}},
		{2, []float32{10, 11, 10, 11, 20, 21, 20, 21}},
		{3, []float32{10, 11, 10, 11, 10, 11, 20, 21, 20, 21, 20, 21}},
	} {
		got := run(t, func(in []*Node) *Node { return RepeatKV(in[0], tc.group) }, x)
		if !slices.Equal(got.Shape().Dimensions, []int{1, 2 * tc.group, 1, 2}) || !slices.Equal(flat(got), tc.want) {
			t.Errorf("RepeatKV(x, %d) = %s %v, want %v", tc.group, got.Shape(), flat(got), tc.want)
		}
	}
}

// TestLaterKeysMask: query i of Tq, at position Tk-Tq+i, may not see the keys after it.
func TestLaterKeysMask(t *testing.T) {
	for _, tc := range []struct {
		tq, tk int
		want   []bool
	}{
		{3, 3, []bool{false, true, true, false, false, true, false, false, false}}, // FutureMask
		{2, 4, []bool{false, false, false, true, false, false, false, false}},
		{1, 3, []bool{false, false, false}}, // the newest token sees the whole cache
	} {
		got, err := CallOnce(testBackend(t), func(g *Graph) *Node { return LaterKeysMask(g, tc.tq, tc.tk) })
		if err != nil {
			t.Fatal(err)
		}
		if v := tensors.MustCopyFlatData[bool](got); !slices.Equal(v, tc.want) {
			t.Errorf("LaterKeysMask(%d, %d) = %v, want %v", tc.tq, tc.tk, v, tc.want)
		}
	}
}

// TestGQAErrors: bad shapes and sizes name the function, the argument and what was given.
func TestGQAErrors(t *testing.T) {
	f := zeros
	for _, tc := range []struct {
		name   string
		fn     func(in []*Node) *Node
		inputs []*tensors.Tensor
		want   []string
	}{
		{"heads not a multiple", func(in []*Node) *Node { c, _ := GroupedQueryCausal(in[0], in[1], in[2]); return c },
			[]*tensors.Tensor{f(1, 4, 6, 2), f(1, 3, 6, 2), f(1, 3, 6, 2)}, []string{"attention.GroupedQueryCausal: keys", "[1, 3, 6, 2]", "[1, 4, 6, 2]", "Hkv dividing 4"}},
		{"fewer keys than queries", func(in []*Node) *Node { c, _ := GroupedQueryCausal(in[0], in[1], in[2]); return c },
			[]*tensors.Tensor{f(1, 4, 6, 2), f(1, 2, 5, 2), f(1, 2, 5, 2)}, []string{"attention.GroupedQueryCausal: keys", "Tk >= 6"}},
		{"values unlike keys", func(in []*Node) *Node { c, _ := GroupedQueryCausal(in[0], in[1], in[2]); return c },
			[]*tensors.Tensor{f(1, 4, 6, 2), f(1, 2, 6, 2), f(1, 2, 6, 3)}, []string{"attention.GroupedQueryCausal: values", "[1, 2, 6, 3]", "[1, 2, 6, 2]"}},
		{"RepeatKV rank", func(in []*Node) *Node { return RepeatKV(in[0], 2) }, []*tensors.Tensor{f(2, 6, 2)},
			[]string{"attention.RepeatKV: x", "rank"}},
		{"RepeatKV group", func(in []*Node) *Node { return RepeatKV(in[0], 0) }, []*tensors.Tensor{f(1, 2, 6, 2)},
			[]string{"attention.RepeatKV: groupSize", "got 0"}},
	} {
		args := make([]any, len(tc.inputs))
		for i, x := range tc.inputs {
			args[i] = x
		}
		_, err := CallOnce(testBackend(t), tc.fn, args...)
		wantErr(t, tc.name, err, tc.want...)
	}
	wantErr(t, "NewGroupedQueryAttention groups", Catch(func() { NewGroupedQueryAttention(torchrand.New(1), 8, 8, 6, 0, 4, 3, false) }),
		"attention.NewGroupedQueryAttention: numKVGroups", "(3) must divide numHeads (4)")
	_, err := NewGroupedQueryAttention(torchrand.New(1), 8, 8, 6, 0, 4, 2, false).Call(zeros(1, 7, 8))
	wantErr(t, "GroupedQueryAttention.Call tokens", err, "GroupedQueryAttention.Call", "7")
}
