package backend

import (
	"runtime"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
)

// manyProducts runs on b one graph with n independent [1024, 64]·[64, 1024] matrix products
// (large enough for the pure-Go backend to split each over its worker pool) and returns their
// total, or ok=false when it has not finished after limit.
func manyProducts(t *testing.T, b compute.Backend, n int, limit time.Duration) (sum float32, ok bool) {
	lhs := make([][]float32, 1024)
	for i := range lhs {
		lhs[i] = make([]float32, 64)
		for j := range lhs[i] {
			lhs[i][j] = float32(i%7+j%5) / 160
		}
	}
	done := make(chan float32, 1)
	go func() {
		out := graph.MustExecOnce(b, func(a *graph.Node) *graph.Node {
			var total *graph.Node
			for k := range n {
				p := graph.Dot(graph.AddScalar(a, float64(k)), graph.Transpose(a, 0, 1)).Product() // [1024, 1024]
				s := graph.ReduceAllSum(p)
				if total == nil {
					total = s
				} else {
					total = graph.Add(total, s)
				}
			}
			return total
		}, lhs)
		done <- out.Value().(float32)
	}()
	select {
	case v := <-done:
		return v, true
	case <-time.After(limit):
		return 0, false
	}
}

// wantSum is the total of manyProducts for n products, in float64: the entries of (a + k)·aᵀ sum
// to sum_j (c_j + 1024·k)·c_j, with c_j the column sums of a. The backend's float32 reductions
// over 2^20 entries per product land within 0.5% of it; one product missing would be off by
// more than 5%.
func wantSum(n int) float64 {
	total := 0.0
	for k := range n {
		for j := range 64 {
			c := 0.0
			for i := range 1024 {
				c += float64(float32(i%7+j%5) / 160)
			}
			total += (c + 1024*float64(k)) * c
		}
	}
	return total
}

// TestManyIndependentProducts runs, on the default backend, one graph with more independent
// large matrix products than the pure-Go backend has worker slots by default (2·GOMAXPROCS) —
// the shape of a multi-head attention made of a list of heads (seed 003's 12 heads × 3
// projections). compute v0.1.6's pure-Go backend deadlocked on it with its default settings
// (attnbook then started it without a slot limit); v0.1.14 must run it as it comes.
func TestManyIndependentProducts(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	n := 4*runtime.GOMAXPROCS(0) + 4
	got, ok := manyProducts(t, b, n, time.Minute)
	if !ok {
		t.Fatalf("backend %q: a graph of %d independent matrix products did not finish in a minute (worker-pool deadlock of GoMLX's pure-Go backend)", Chosen().Config, n)
	}
	if want := wantSum(n); abs(float64(got)-want) > 5e-3*want {
		t.Errorf("sum of %d products = %v, want %v", n, got, want)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
