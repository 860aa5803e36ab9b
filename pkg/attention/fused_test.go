package attention

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	gomlxattention "github.com/gomlx/gomlx/ml/layers/attention"
	"github.com/gomlx/gomlx/ml/model"
)

// evalGoldens are the evaluation-mode MultiHeadAttention goldens: PyTorch's module, the input,
// the output.
func evalGoldens() []struct {
	name, input, out string
	m                *MultiHeadAttention
} {
	return []struct {
		name, input, out string
		m                *MultiHeadAttention
	}{
		{"seed000", "s000/x", "s000/mha/eval_out", NewMultiHeadAttention(torchrand.New(123), 6, 6, 3, 0.1, 2, false)},
		{"seed001", "s001/batch", "s001/mha/out", NewMultiHeadAttention(torchrand.New(123), 3, 2, 6, 0, 2, false)},
		{"seed000_bias", "s000/mha_b/x", "s000/mha_b/eval_out", NewMultiHeadAttention(torchrand.New(5), 5, 8, 7, 0.25, 4, true)},
	}
}

// withCore runs m's forward pass on x with core as the attention of the split heads
// (`[B, H, T, hs]` each → `[B, H, T, hs]`), reading m's own variables.
func withCore(t *testing.T, m *MultiHeadAttention, x *tensors.Tensor, core func(q, k, v *Node) *Node) *tensors.Tensor {
	t.Helper()
	return runCtx(t, m.Store(), func(scope *model.Scope, in []*Node) *Node {
		q := SplitHeads(m.linear(scope, "W_query", in[0]), m.numHeads) // [B, H, T, hs]
		k := SplitHeads(m.linear(scope, "W_key", in[0]), m.numHeads)   // [B, H, T, hs]
		v := SplitHeads(m.linear(scope, "W_value", in[0]), m.numHeads) // [B, H, T, hs]
		return m.linear(scope, "out_proj", MergeHeads(core(q, k, v)))  // [B, T, d_out]
	}, x)
}

// TestFusedCausal checks FusedCausal against PyTorch's MultiHeadAttention (evaluation mode) at
// the seeds' sizes and against ScaledDotProduct(...).Causal(true), forward and backward.
func TestFusedCausal(t *testing.T) {
	for _, c := range evalGoldens() {
		t.Run(c.name, func(t *testing.T) {
			c.m.Eval()
			got := withCore(t, c.m, golden(t, c.input), FusedCausal)
			assertClose(t, c.name+" FusedCausal vs PyTorch", got, golden(t, c.out), relTol)
		})
	}

	g := torchrand.New(21)
	q, k, v := g.Randn(2, 3, 37, 8), g.Randn(2, 3, 37, 8), g.Randn(2, 3, 37, 8)
	outs := runN(t, func(in []*Node) []*Node {
		fused := FusedCausal(in[0], in[1], in[2])
		exact, _ := ScaledDotProduct(in[0], in[1], in[2]).Causal(true).Done()
		// A loss that weighs every output differently, so every gradient entry matters.
		wts := AddScalar(Iota(in[0].Graph(), fused.Shape(), 3), 1)
		grads := Gradient(ReduceAllSum(Mul(fused, wts)), in[0], in[1], in[2])
		want := Gradient(ReduceAllSum(Mul(exact, wts)), in[0], in[1], in[2])
		return append([]*Node{fused, exact}, append(grads, want...)...)
	}, q, k, v)
	assertClose(t, "FusedCausal vs ScaledDotProduct", outs[0], outs[1], relTol)
	for i, name := range []string{"dq", "dk", "dv"} {
		assertClose(t, "FusedCausal gradient "+name, outs[2+i], outs[5+i], 1e-5)
		if maxAbs(flat(outs[2+i])) == 0 {
			t.Errorf("FusedCausal gradient %s is all zeros", name)
		}
	}
	// Causal: query 0 sees key 0 only, so its output is v's row 0.
	o, vv := flat(outs[0]), flat(v)
	for j := range 8 {
		if o[j] != vv[j] {
			t.Fatalf("FusedCausal output [0,0,0,%d] = %v, want v[0,0,0,%d] = %v", j, o[j], j, vv[j])
		}
	}
}

// TestFusedCausalIsGoMLXCore holds FusedCausal to GoMLX's ml/layers/attention.Core (causal,
// `[B, H, T, hd]`), which it restates so as not to link GoMLX's layers: the same outputs and
// gradients bit for bit, through the backend's fused op (hd 64 has the go backend's SIMD kernel)
// and with fusion switched off (GOMLX_FUSION=0, GoMLX's decomposed graph).
func TestFusedCausalIsGoMLXCore(t *testing.T) {
	for _, fusion := range []string{"1", "0"} {
		for _, dims := range [][]int{{2, 3, 37, 8}, {1, 2, 70, 64}} {
			t.Run(fmt.Sprintf("fusion=%s/%v", fusion, dims), func(t *testing.T) {
				t.Setenv("GOMLX_FUSION", fusion)
				g := torchrand.New(int64(dims[2]))
				q, k, v := g.Randn(dims...), g.Randn(dims...), g.Randn(dims...)
				outs := runN(t, func(in []*Node) []*Node {
					ours := FusedCausal(in[0], in[1], in[2])
					core, _ := gomlxattention.Core(in[0], in[1], in[2], gomlxattention.LayoutBHSD,
						gomlxattention.CoreOptions{UseCausalMask: true})
					wts := AddScalar(Iota(in[0].Graph(), ours.Shape(), 3), 1)
					grads := Gradient(ReduceAllSum(Mul(ours, wts)), in[0], in[1], in[2])
					want := Gradient(ReduceAllSum(Mul(core, wts)), in[0], in[1], in[2])
					return append([]*Node{ours, core}, append(grads, want...)...)
				}, q, k, v)
				pairs := [][2]int{{0, 1}, {2, 5}, {3, 6}, {4, 7}} // [ours, Core's] for output, dq, dk, dv
				for i, name := range []string{"output", "dq", "dk", "dv"} {
					assertClose(t, "FusedCausal vs Core "+name, outs[pairs[i][0]], outs[pairs[i][1]], 0)
				}
			})
		}
	}
}

func maxAbs(xs []float32) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, math.Abs(float64(x)))
	}
	return m
}

// TestFastCausalMultiHead checks the exported fast formulation against PyTorch's module
// (evaluation mode) and against the module's SetFast graph.
func TestFastCausalMultiHead(t *testing.T) {
	for _, c := range evalGoldens() {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			m.Eval()
			x := golden(t, c.input)
			got := runCtx(t, m.Store(), func(scope *model.Scope, in []*Node) *Node {
				g := in[0].Graph()
				p := func(key string) *Node { return m.optParam(scope, g, key) }
				return FastCausalMultiHead(in[0], m.numHeads, p("W_query.weight"), p("W_query.bias"), p("W_key.weight"), p("W_key.bias"),
					p("W_value.weight"), p("W_value.bias"), p("out_proj.weight"), p("out_proj.bias"))
			}, x)
			m.SetFast(true)
			assertClose(t, c.name+" FastCausalMultiHead vs SetFast", got, m.Forward(x), sameMathTol(t))
			assertClose(t, c.name+" FastCausalMultiHead vs PyTorch", got, golden(t, c.out), relTol)
		})
	}
}

// TestFusedErrors: bad shapes name the function, the argument and the shapes.
func TestFusedErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		fn     func(in []*Node) *Node
		inputs []*tensors.Tensor
		want   []string
	}{
		{"FusedCausal rank", func(in []*Node) *Node { return FusedCausal(in[0], in[0], in[0]) }, []*tensors.Tensor{zeros(2, 5, 4)},
			[]string{"attention.FusedCausal: q", "rank must be 4"}},
		{"FusedCausal k", func(in []*Node) *Node { return FusedCausal(in[0], in[1], in[0]) }, []*tensors.Tensor{zeros(1, 2, 5, 4), zeros(1, 2, 6, 4)},
			[]string{"attention.FusedCausal: k", "[1, 2, 6, 4]", "[1, 2, 5, 4]"}},
		{"FusedCausal v", func(in []*Node) *Node { return FusedCausal(in[0], in[0], in[1]) }, []*tensors.Tensor{zeros(1, 2, 5, 4), zeros(1, 2, 5, 3)},
			[]string{"attention.FusedCausal: v", "[1, 2, 5, 3]"}},
		{"FastCausalMultiHead heads", func(in []*Node) *Node {
			return FastCausalMultiHead(in[0], 4, in[1], nil, in[1], nil, in[1], nil, in[2], nil)
		}, []*tensors.Tensor{zeros(1, 5, 3), zeros(6, 3), zeros(6, 6)},
			[]string{"attention.FastCausalMultiHead: wq", "d_out (6) is not divisible by numHeads (4)"}},
		{"FastCausalMultiHead wk", func(in []*Node) *Node {
			return FastCausalMultiHead(in[0], 2, in[1], nil, in[2], nil, in[1], nil, in[3], nil)
		}, []*tensors.Tensor{zeros(1, 5, 3), zeros(6, 3), zeros(6, 4), zeros(6, 6)},
			[]string{"attention.FastCausalMultiHead: wk", "[6, 4]", "[1, 5, 3]", "[6 3]"}},
		{"FastCausalMultiHead bo", func(in []*Node) *Node {
			return FastCausalMultiHead(in[0], 2, in[1], nil, in[1], nil, in[1], nil, in[2], in[3])
		}, []*tensors.Tensor{zeros(1, 5, 3), zeros(6, 3), zeros(6, 6), zeros(5)},
			[]string{"attention.FastCausalMultiHead: bo", "[5]", "want [6]"}},
	} {
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

// TestNoGoMLXLayers: notebook cells that import this package link what it imports, and each
// cell's link is most of its time; GoMLX's ml/... packages past ml/model (the variables) —
// layers, training, optimizers — would add 7–8 % to it. FusedCausal restates attention.Core
// (see TestFusedCausalIsGoMLXCore) to keep them out; tests may import them.
func TestNoGoMLXLayers(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil && os.Getenv("CI") != "true" {
		t.Skipf("SKIPPED: TestNoGoMLXLayers needs the go command that built this test (%v)", err)
	}
	out, err := exec.Command(goBin, "list", "-tags", "noxla", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for pkg := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(pkg, "github.com/gomlx/gomlx/ml/") && pkg != "github.com/gomlx/gomlx/ml/model" {
			t.Errorf("pkg/attention depends on %s: notebook cells would link GoMLX's ml packages", pkg)
		}
	}
}
