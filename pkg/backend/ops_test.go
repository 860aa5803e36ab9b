package backend

import (
	"runtime"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/graph"
)

func TestRunConfig(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"go", "go:ops_sequential"},
		{"go:ops_parallel", "go:ops_parallel"},
		{"go:parallelism=4", "go:parallelism=4"},
		{"xla:cpu", "xla:cpu"},
		{"xla:cuda", "xla:cuda"},
	} {
		if got := runConfig(tc.config); got != tc.want {
			t.Errorf("runConfig(%q) = %q, want %q", tc.config, got, tc.want)
		}
	}
}

// TestManyIndependentProducts runs, on the default backend, one graph with more independent
// large matrix products than the pure-Go backend has worker slots (2·NumCPU) — the shape of a
// multi-head attention made of a list of heads (seed 003's 12 heads × 3 projections). With GoMLX
// v0.26.0's parallel op scheduling on a bare "go" backend this deadlocks; Default must not.
func TestManyIndependentProducts(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	n := 4*runtime.NumCPU() + 4
	lhs := make([][]float32, 256)
	for i := range lhs {
		lhs[i] = make([]float32, 8)
		for j := range lhs[i] {
			lhs[i][j] = float32(i%7+j) / 16
		}
	}
	done := make(chan float32, 1)
	go func() {
		out := graph.MustExecOnce(b, func(a *graph.Node) *graph.Node {
			var sum *graph.Node
			for k := 0; k < n; k++ {
				// [256, 8] · [8, 256] → [256, 256]: a "large" problem for simplego.
				p := graph.Dot(graph.AddScalar(a, float64(k)), graph.Transpose(a, 0, 1))
				s := graph.ReduceAllSum(p)
				if sum == nil {
					sum = s
				} else {
					sum = graph.Add(sum, s)
				}
			}
			return sum
		}, lhs)
		done <- out.Value().(float32)
	}()
	select {
	case v := <-done:
		if v <= 0 {
			t.Errorf("sum of %d products = %v, want > 0", n, v)
		}
	case <-time.After(time.Minute):
		t.Fatalf("backend %q: a graph of %d independent matrix products did not finish in a minute (worker-pool deadlock of GoMLX's pure-Go backend with parallel op scheduling)", Chosen().Config, n)
	}
}
