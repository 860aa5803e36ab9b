package backend

import (
	"flag"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
)

var deadlock = flag.Bool("deadlock", false,
	"also run TestManyIndependentProducts on the bare \"go\" backend (parallel op scheduling), to see whether GoMLX still deadlocks there; "+
		"a deadlock leaves goroutines stuck until the test binary exits")

func TestRunConfig(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"go", "go:parallelism=-1,ops_parallel"},
		{"go:", "go:parallelism=-1,ops_parallel"},
		{"go:ops_parallel", "go:ops_parallel"},
		{"go:ops_sequential", "go:ops_sequential"},
		{"go:parallelism=4", "go:parallelism=4,ops_sequential"},
		{"go:parallelism=-1", "go:parallelism=-1,ops_parallel"},
		{"go:parallelism=4,ops_parallel", "go:parallelism=4,ops_parallel"},
		{"go:dependency_order", "go:dependency_order,parallelism=-1,ops_parallel"},
		{"xla:cpu", "xla:cpu"},
		{"xla:cuda", "xla:cuda"},
		{"gomlx_go", "gomlx_go"},
	} {
		got := RunConfig(tc.config)
		if got != tc.want {
			t.Errorf("RunConfig(%q) = %q, want %q", tc.config, got, tc.want)
		}
		if b, err := newBackend(got); tc.want[:3] == "go:" && err != nil {
			t.Errorf("RunConfig(%q) = %q: gobackend rejects it: %v", tc.config, got, err)
		} else if err == nil {
			if strings.Contains(got, "parallelism=-1") && !strings.Contains(b.Description(), "parallelism=-1") {
				t.Errorf("newBackend(%q): %q, want unlimited worker slots (parallelism=-1)", got, b.Description())
			}
			b.Finalize()
		}
	}
}

// TestUnlimitedWorkersSilent: starting "go" with unlimited worker slots prints nothing (gobackend
// prints a line on stdout for its parallelism option, which a notebook cell would show).
func TestUnlimitedWorkersSilent(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	b, err := New("go")
	os.Stdout = saved
	w.Close()
	printed, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	if len(printed) > 0 {
		t.Errorf(`New("go") printed %q on stdout`, printed)
	}
	if !strings.Contains(b.Description(), "parallelism=-1") {
		t.Errorf(`New("go"): %q, want unlimited worker slots`, b.Description())
	}
}

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
// projections). With parallel op scheduling and its default slot limit GoMLX v0.28.8's pure-Go
// backend deadlocks on it (see RunConfig); Default, parallel without a slot limit, must not.
// With -deadlock it also tries the bare "go" backend.
func TestManyIndependentProducts(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	n := 4*runtime.GOMAXPROCS(0) + 4
	got, ok := manyProducts(t, b, n, time.Minute)
	if !ok {
		t.Fatalf("backend %q: a graph of %d independent matrix products did not finish in a minute (worker-pool deadlock of GoMLX's pure-Go backend with parallel op scheduling)", Chosen().Config, n)
	}
	if want := wantSum(n); abs(float64(got)-want) > 5e-3*want {
		t.Errorf("sum of %d products = %v, want %v", n, got, want)
	}

	if !*deadlock {
		return
	}
	bare, err := newBackend("go")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := manyProducts(t, bare, 2*runtime.GOMAXPROCS(0), 30*time.Second); ok {
		t.Errorf(`bare "go" backend (parallel op scheduling) ran %d independent products: GoMLX's deadlock looks fixed; RunConfig may leave the slot limit alone`, 2*runtime.GOMAXPROCS(0))
	} else {
		t.Logf(`bare "go" backend still deadlocks on %d independent products (GOMAXPROCS=%d): keep RunConfig's parallelism=-1`, 2*runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0))
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
