package backend

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/sgemm"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// sgemmBackend is a "go" backend with internal/sgemm installed; it skips where the CPU has no
// sgemm kernel.
func sgemmBackend(tb testing.TB) compute.Backend {
	tb.Helper()
	if !sgemm.Available() {
		tb.Skip("no AVX-512 or AVX2+FMA: compute's kernels run every product here")
	}
	b, err := New("go")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(b.Finalize)
	if on, detail := Sgemm(); !on {
		tb.Fatalf("sgemm not installed: %s", detail)
	}
	return b
}

// randomFloats is n draws of N(0, 1).
func randomFloats(n int, rng *rand.Rand) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestSgemmInstalled runs float32 products through the pure-Go backend and checks that the large
// ones went to internal/sgemm, in both of compute's layouts, with the right numbers.
func TestSgemmInstalled(t *testing.T) {
	b := sgemmBackend(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const m, k, n = 70, 130, 90 // 819000 multiply-adds: above sgemmMinFMAs
	x, y := randomFloats(m*k, rng), randomFloats(k*n, rng)
	for _, c := range []struct {
		name   string
		layout int
		fn     func(a, b *graph.Node) *graph.Node
		rhs    []int
	}{
		{"x·y", layoutNonTransposed, graph.MatMul, []int{k, n}},
		{"x·yᵀ", layoutTransposed, func(a, b *graph.Node) *graph.Node {
			return graph.Einsum("mk,nk->mn", a, graph.Transpose(b, 0, 1))
		}, []int{k, n}},
	} {
		before := sgemmUsed[c.layout].Load()
		got := graph.MustExecOnce(b, c.fn, tensors.FromFlatDataAndDimensions(x, m, k), tensors.FromFlatDataAndDimensions(y, c.rhs...)).Value().([][]float32)
		if sgemmUsed[c.layout].Load() == before {
			t.Errorf("%s: the product did not reach sgemm (layout %d)", c.name, c.layout)
		}
		for i := range m {
			for j := range n {
				var want float64
				for p := range k {
					want += float64(x[i*k+p]) * float64(y[p*n+j])
				}
				if math.Abs(float64(got[i][j])-want) > 1e-4 {
					t.Fatalf("%s: [%d][%d] = %g, want %g", c.name, i, j, got[i][j], want)
				}
			}
		}
	}
}

// TestHookedComputeIsRequired keeps the hook and go.mod together: moving to another compute
// version means checking its dot registry against matmul_amd64.go's mirrors first.
func TestHookedComputeIsRequired(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "github.com/gomlx/compute " + hookedCompute; !strings.Contains(string(gomod), want) {
		t.Errorf("go.mod does not require %q: check compute's internal/gobackend/dot registry against matmul_amd64.go, then update hookedCompute", want)
	}
}
