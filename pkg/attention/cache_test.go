package attention

import (
	"fmt"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
)

// growing is one module type for TestEveryLength: its call on the first T tokens of x, whether
// it is causal (its first T output rows then equal those of the full input), and its context
// length (0: none).
type growing struct {
	name    string
	call    func(x *tensors.Tensor) (*tensors.Tensor, error)
	causal  bool
	context int
	mod     *Module
}

// growingModules builds every module type, in evaluation mode, for inputs `[1, T, 3]` with a
// context length of 40 (more than GoMLX's default of 32 graphs per Exec).
func growingModules() []growing {
	const ctx = 40
	g := torchrand.New(3)
	v1, v2 := NewSelfAttentionV1(g, 3, 4), NewSelfAttentionV2(g, 3, 4, true)
	ca := NewCausalAttention(g, 3, 4, ctx, 0.5, false)
	wr := NewMultiHeadAttentionWrapper(g, 3, 2, ctx, 0.5, 2, false)
	mha := NewMultiHeadAttention(g, 3, 4, ctx, 0.5, 2, true)
	fast := NewMultiHeadAttention(g, 3, 4, ctx, 0.5, 2, true)
	fast.SetFast(true)
	cross := NewCrossAttention(g, 2, 4, true)
	cfg := Config{ContextSize: ctx, EmbeddingDim: 3, HeadsNum: 3, HeadSize: 1, DropoutRate: 0.1}
	head, heads := NewHead(g, cfg), NewHeadList(g, cfg)
	crossIn := func(x *tensors.Tensor) *tensors.Tensor { // widen [1, T, 3] to [1, T, 4]
		d := flat(x)
		w := make([]float32, 0, len(d)/3*4)
		for i := 0; i < len(d); i += 3 {
			w = append(w, d[i], d[i+1], d[i+2], d[i]-d[i+1])
		}
		return tensors.FromFlatDataAndDimensions(w, 1, len(d)/3, 4)
	}
	ms := []growing{
		{"SelfAttentionV1", v1.Call, false, 0, &v1.Module},
		{"SelfAttentionV2", v2.Call, false, 0, &v2.Module},
		{"CausalAttention", ca.Call, true, ctx, &ca.Module},
		{"MultiHeadAttentionWrapper", wr.Call, true, ctx, &wr.Module},
		{"MultiHeadAttention", mha.Call, true, ctx, &mha.Module},
		{"MultiHeadAttention fast", fast.Call, true, ctx, &fast.Module},
		{"CrossAttention causal", func(x *tensors.Tensor) (*tensors.Tensor, error) {
			return cross.Call(crossIn(x), nil, nil, true)
		}, true, 0, &cross.Module},
		{"CrossAttention", func(x *tensors.Tensor) (*tensors.Tensor, error) {
			return cross.Call(crossIn(x), nil, nil, false)
		}, false, 0, &cross.Module},
		{"Head", head.Call, true, ctx, &head.Module},
		{"HeadList", heads.Call, true, ctx, &heads.Module},
	}
	for _, m := range ms {
		m.mod.Eval()
	}
	return ms
}

// prefix returns the first t tokens of x `[1, T, d]`.
func prefix(x *tensors.Tensor, t int) *tensors.Tensor {
	d := x.Shape().Dim(2)
	return tensors.FromFlatDataAndDimensions(flat(x)[:t*d], 1, t, d)
}

// TestEveryLength runs every module type on T = 1…40 tokens (issue 14: modules failed at the 33rd
// input shape with GoMLX's "maximum cache size of 32 reached"), twice: every call works, the
// second pass compiles nothing, causal modules give the rows of the full-length output, and one
// token more than the context length is an argument error naming the function, x, T and the
// context length.
func TestEveryLength(t *testing.T) {
	const n = 40
	x := torchrand.New(4).Rand(1, n+1, 3)
	for _, m := range growingModules() {
		t.Run(m.name, func(t *testing.T) {
			full, err := m.call(prefix(x, n))
			if err != nil {
				t.Fatal(err)
			}
			built := m.mod.builds
			for pass := range 2 {
				for tok := 1; tok <= n; tok++ {
					out, err := m.call(prefix(x, tok))
					if err != nil {
						t.Fatalf("pass %d, T=%d: %v", pass, tok, err)
					}
					if got := out.Shape().Dimensions; got[0] != 1 || got[1] != tok {
						t.Fatalf("T=%d: output dims %v", tok, got)
					}
					if m.causal {
						want := tensors.FromFlatDataAndDimensions(flat(full)[:out.Size()], out.Shape().Dimensions...)
						assertClose(t, fmt.Sprintf("T=%d rows of the T=%d output", tok, n), out, want, relTol)
					}
				}
				if pass == 0 {
					built = m.mod.builds
				} else if m.mod.builds != built {
					t.Errorf("the second pass over T = 1…%d built %d graphs, want 0 (cached)", n, m.mod.builds-built)
				}
			}
			if m.context == 0 {
				return
			}
			_, err = m.call(x) // n+1 tokens
			want := fmt.Sprintf("x dims [1 %d 3]: %d tokens exceed context_length=%d", n+1, n+1, m.context)
			wantErr(t, "T > context length", err, want, ".Call")
		})
	}
}

// TestGraphCacheEvicts: with room for 8 graphs, T = 1…20 twice compiles 40 graphs, keeps 8 and
// still gives the same numbers.
func TestGraphCacheEvicts(t *testing.T) {
	defer func(old int) { maxGraphs = old }(maxGraphs)
	maxGraphs = 8
	x := torchrand.New(5).Rand(1, 20, 3)
	m := NewCausalAttention(torchrand.New(6), 3, 4, 20, 0, false)
	first := make([]*tensors.Tensor, 21)
	for pass := range 2 {
		for tok := 1; tok <= 20; tok++ {
			out := m.Forward(prefix(x, tok))
			if pass == 0 {
				first[tok] = out
			} else {
				assertClose(t, fmt.Sprintf("T=%d recompiled", tok), out, first[tok], 0)
			}
		}
	}
	if m.builds != 40 || m.graphs.len() != 8 {
		t.Errorf("built %d graphs and kept %d, want 40 and 8", m.builds, m.graphs.len())
	}
	// The most recently used ones are kept: T = 13…20.
	before := m.builds
	m.Forward(prefix(x, 13))
	m.Forward(prefix(x, 20))
	if m.builds != before {
		t.Errorf("T=13 and T=20, the last 8 used, were recompiled")
	}
	m.Forward(prefix(x, 12))
	if m.builds != before+1 {
		t.Errorf("T=12, evicted, was not recompiled")
	}
}
