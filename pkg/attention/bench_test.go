package attention

import (
	"syscall"
	"testing"
	"time"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// benchSize is one MultiHeadAttention benchmark configuration.
type benchSize struct {
	name                   string
	b, t, dIn, dOut, heads int
	big                    bool // skipped with -short
}

var benchSizes = []benchSize{
	{"seed000_1x3x6x2", 1, 3, 6, 6, 2, false},
	{"seed001_2x6x3to2x2", 2, 6, 3, 2, 2, false},
	{"gpt2_1x1024x768x12", 1, 1024, 768, 768, 12, true}, // one sequence of the big one: quicker
	{"gpt2_8x1024x768x12", 8, 1024, 768, 768, 12, true},
}

// BenchmarkMultiHeadAttention times MultiHeadAttention's forward pass (evaluation mode, one
// compiled graph, weights not recorded) in its three formulations — "exact" (the default,
// PyTorch's operation order), "fast" (SetFast, [FastCausalMultiHead]) and "fused" (the same
// projections around [FusedCausal]) — at the seeds' sizes and at GPT-2's (batch 8 × 1024 tokens
// × 768 dims × 12 heads; skipped with -short). Compare the big one with BenchmarkMatmuls:
//
//	go test -run XXX -bench 'MultiHeadAttention|Matmuls' -benchtime 3x ./pkg/attention/
func BenchmarkMultiHeadAttention(b *testing.B) {
	for _, s := range benchSizes {
		for _, mode := range []string{"exact", "fast", "fused"} {
			b.Run(s.name+"/"+mode, func(b *testing.B) {
				if s.big && testing.Short() {
					b.Skip("big benchmark skipped with -short")
				}
				g := torchrand.New(0)
				m := NewMultiHeadAttention(g, s.dIn, s.dOut, s.t, 0, s.heads, false)
				m.Eval()
				m.RecordWeights(false)
				m.SetFast(mode == "fast")
				x := g.Rand(s.b, s.t, s.dIn)
				forward := func() { m.Forward(x) }
				if mode == "fused" {
					exec, err := model.NewExec(testBackend(b), m.Store(), func(scope *model.Scope, x *Node) *Node {
						q := SplitHeads(m.linear(scope, "W_query", x), m.numHeads) // [B, H, T, hs]
						k := SplitHeads(m.linear(scope, "W_key", x), m.numHeads)   // [B, H, T, hs]
						v := SplitHeads(m.linear(scope, "W_value", x), m.numHeads) // [B, H, T, hs]
						return m.linear(scope, "out_proj", MergeHeads(FusedCausal(q, k, v)))
					})
					if err != nil {
						b.Fatal(err)
					}
					forward = func() {
						if _, err := exec.Call(x); err != nil {
							b.Fatal(err)
						}
					}
				}
				forward() // compile
				cpu := startCPU(b)
				for range b.N {
					forward()
				}
				cpu.report()
			})
		}
	}
}

// BenchmarkMatmuls times only the six matrix products of MultiHeadAttention's forward pass, in
// one compiled graph with the same shapes: the three projections `[B, T, d_in]` × `[d_out,
// d_in]`, the scores `[B, H, T, hs]` × `[B, H, T, hs]` → `[B, H, T, T]`, weights × values →
// `[B, H, T, hs]` and out_proj. Heads are cut by free reshapes (wrong layout, same cost), and
// nothing else is computed: no transposes, mask, scaling, softmax or biases.
func BenchmarkMatmuls(b *testing.B) {
	for _, s := range benchSizes {
		b.Run(s.name, func(b *testing.B) {
			if s.big && testing.Short() {
				b.Skip("big benchmark skipped with -short")
			}
			g := torchrand.New(0)
			x := g.Rand(s.b, s.t, s.dIn)
			var ws []*tensors.Tensor
			for range 3 {
				w, _ := g.Linear(s.dIn, s.dOut, false)
				ws = append(ws, w)
			}
			wo, _ := g.Linear(s.dOut, s.dOut, false)
			hs := s.dOut / s.heads
			exec, err := NewExec(testBackend(b), func(in []*Node) *Node {
				x := in[0]
				q := Reshape(Linear(x, in[1], nil), s.b, s.heads, s.t, hs) // [B, H, T, hs]
				k := Reshape(Linear(x, in[2], nil), s.b, s.heads, s.t, hs) // [B, H, T, hs]
				v := Reshape(Linear(x, in[3], nil), s.b, s.heads, s.t, hs) // [B, H, T, hs]
				scores := Scores(q, k)                                     // [B, H, T, T]
				heads := ContextVectors(scores, v)                         // [B, H, T, hs]
				merged := Reshape(heads, s.b, s.t, s.dOut)                 // [B, T, d_out]
				return Linear(merged, in[4], nil)                          // [B, T, d_out]
			})
			if err != nil {
				b.Fatal(err)
			}
			args := []any{x, ws[0], ws[1], ws[2], wo}
			if _, err := exec.Call(args...); err != nil { // compile
				b.Fatal(err)
			}
			cpu := startCPU(b)
			for range b.N {
				if _, err := exec.Call(args...); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report()
		})
	}
}

// cpuClock measures the CPU time (user + system) the process spends in a benchmark loop and
// reports it per op as "cpu-s/op": on a machine shared with other jobs, wall time (ns/op)
// varies with their load, CPU time much less.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuClock {
	c := cpuClock{b: b, start: cpuTime()}
	b.ResetTimer()
	return c
}

func (c cpuClock) report() {
	c.b.StopTimer()
	c.b.ReportMetric((cpuTime()-c.start).Seconds()/float64(c.b.N), "cpu-s/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGrowingLength times one token-by-token pass, T = 1…context length, through a
// MultiHeadAttention in evaluation mode (issue 14: graphs reusable across lengths), three ways:
// "compile" (a fresh module: every length compiles its graph, the first pass), "cached" (the
// graphs of an earlier pass kept in the module's cache) and "padded" (the alternative design:
// one graph at the full context length, every step computing all of it — timed as Forward on
// the full length, which is what a padded step costs at least). One op is a whole pass.
func BenchmarkGrowingLength(b *testing.B) {
	for _, s := range []struct {
		name                     string
		dIn, dOut, heads, ctxLen int
	}{
		{"3to4x2heads_ctx64", 3, 4, 2, 64},
		{"768x12heads_ctx128", 768, 768, 12, 128},
	} {
		g := torchrand.New(0)
		x := g.Rand(1, s.ctxLen, s.dIn)
		prefixes := make([]*tensors.Tensor, s.ctxLen+1)
		for t := 1; t <= s.ctxLen; t++ {
			prefixes[t] = prefix(x, t)
		}
		newModule := func() *MultiHeadAttention {
			m := NewMultiHeadAttention(torchrand.New(1), s.dIn, s.dOut, s.ctxLen, 0, s.heads, false)
			m.Eval()
			m.RecordWeights(false)
			return m
		}
		for _, mode := range []string{"compile", "cached", "padded"} {
			b.Run(s.name+"/"+mode, func(b *testing.B) {
				m := newModule()
				for t := 1; t <= s.ctxLen; t++ {
					m.Forward(prefixes[t]) // warm the cache (and the backend)
				}
				cpu := startCPU(b)
				for range b.N {
					if mode == "compile" {
						b.StopTimer()
						m = newModule()
						b.StartTimer()
					}
					for t := 1; t <= s.ctxLen; t++ {
						if mode == "padded" {
							m.Forward(x)
						} else {
							m.Forward(prefixes[t])
						}
					}
				}
				cpu.report()
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*s.ctxLen), "µs/token")
			})
		}
	}
}
