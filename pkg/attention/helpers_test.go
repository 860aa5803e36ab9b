package attention

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// The goldens are PyTorch 1.13's numbers (Debian's x86-64 build, the one behind the seed
// documents) for every computation here, written by testdata/gen_goldens.py.
var update = flag.Bool("update", false,
	"regenerate testdata/goldens.json by running /usr/bin/python3 testdata/gen_goldens.py (needs python3-torch)")

const goldensPath = "testdata/goldens.json"

func TestMain(m *testing.M) {
	flag.Parse()
	if *update {
		cmd := exec.Command("/usr/bin/python3", "testdata/gen_goldens.py")
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+referenceBLAS+string(os.PathListSeparator)+os.Getenv("LD_LIBRARY_PATH"))
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen_goldens.py: %v\n", err)
			if ee, ok := err.(*exec.ExitError); ok {
				os.Stderr.Write(ee.Stderr)
			}
			os.Exit(1)
		}
		if err := os.WriteFile(goldensPath, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// f32 is a golden float32: a JSON number, or "inf", "-inf", "nan".
type f32 float32

func (f *f32) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "inf":
			*f = f32(math.Inf(1))
		case "-inf":
			*f = f32(math.Inf(-1))
		case "nan":
			*f = f32(math.NaN())
		default:
			return fmt.Errorf("bad golden float %q", s)
		}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = f32(float32(v))
	return err
}

type goldenFile struct {
	Torch   string         `json:"torch"`
	Counts  map[string]int `json:"counts"`
	Tensors map[string]struct {
		Shape []int `json:"shape"`
		Data  []f32 `json:"data"`
	} `json:"tensors"`
}

var (
	goldensOnce sync.Once
	goldens     goldenFile
	goldensErr  error
)

func loadGoldens(t testing.TB) *goldenFile {
	t.Helper()
	goldensOnce.Do(func() {
		b, err := os.ReadFile(goldensPath)
		if err != nil {
			goldensErr = err
			return
		}
		goldensErr = json.Unmarshal(b, &goldens)
	})
	if goldensErr != nil {
		t.Fatalf("loading %s: %v", goldensPath, goldensErr)
	}
	return &goldens
}

// golden returns the golden tensor name as a float32 tensor.
func golden(t testing.TB, name string) *tensors.Tensor {
	t.Helper()
	g, ok := loadGoldens(t).Tensors[name]
	if !ok {
		t.Fatalf("no golden %q in %s", name, goldensPath)
	}
	data := make([]float32, len(g.Data))
	for i, v := range g.Data {
		data[i] = float32(v)
	}
	if len(g.Shape) == 0 {
		return tensors.FromScalar(data[0])
	}
	return tensors.FromFlatDataAndDimensions(data, g.Shape...)
}

// testBackend is the process-wide backend (pure Go "go" here).
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	b, err := backend.Default()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run executes fn on inputs in one graph and returns its single output.
func run(t testing.TB, fn func(in []*Node) *Node, inputs ...*tensors.Tensor) *tensors.Tensor {
	t.Helper()
	args := make([]any, len(inputs))
	for i, x := range inputs {
		args[i] = x
	}
	out, err := CallOnce(testBackend(t), fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runN executes fn on inputs in one graph and returns all its outputs.
func runN(t testing.TB, fn func(in []*Node) []*Node, inputs ...*tensors.Tensor) []*tensors.Tensor {
	t.Helper()
	args := make([]any, len(inputs))
	for i, x := range inputs {
		args[i] = x
	}
	e, err := NewExec(testBackend(t), fn)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := e.Call(args...)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// runCtx executes fn with the variables of store on inputs and returns its single output.
func runCtx(t testing.TB, store *model.Store, fn func(scope *model.Scope, in []*Node) *Node, inputs ...*tensors.Tensor) *tensors.Tensor {
	t.Helper()
	args := make([]any, len(inputs))
	for i, x := range inputs {
		args[i] = x
	}
	out, err := model.CallOnce(testBackend(t), store, fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameMathTol is the bound between two graphs of one computation (a module's graph and the same
// math built another way): 0, bit for bit, on the pure-Go backend, which runs each op as written;
// relTol on XLA, which fuses and folds each graph its own way (6e-8 and 1.2e-7 apart on an H200).
func sameMathTol(t testing.TB) float64 {
	if backend.IsGo(testBackend(t)) {
		return 0
	}
	return relTol
}

// flat returns t's float32 values.
func flat(t *tensors.Tensor) []float32 { return tensors.MustCopyFlatData[float32](t) }

// relTol is the fidelity bound: every value within 1e-6 of PyTorch's relative to the largest
// magnitude of its tensor (the normwise relative error ‖got-want‖∞ / ‖want‖∞, which also
// covers values that are near zero because of cancellation), and non-finite values equal.
const relTol = 1e-6

// assertGolden compares got with the golden name: same shape, same non-finite entries, and a
// normwise relative error of at most relTol.
func assertGolden(t *testing.T, name string, got *tensors.Tensor) {
	t.Helper()
	assertClose(t, name, got, golden(t, name), relTol)
}

// assertClose compares got with want (see assertGolden).
func assertClose(t *testing.T, name string, got, want *tensors.Tensor, tol float64) {
	t.Helper()
	if !got.Shape().Equal(want.Shape()) {
		t.Errorf("%s: shape %s, want %s", name, got.Shape(), want.Shape())
		return
	}
	g, w := flat(got), flat(want)
	scale := 0.0
	for _, v := range w {
		if !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v)) {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
	}
	worst, worstAt := 0.0, -1
	for i := range w {
		gv, wv := float64(g[i]), float64(w[i])
		if math.IsNaN(wv) || math.IsInf(wv, 0) || math.IsNaN(gv) || math.IsInf(gv, 0) {
			if !(math.IsNaN(wv) && math.IsNaN(gv)) && gv != wv {
				t.Errorf("%s[%d] = %v, want %v", name, i, gv, wv)
			}
			continue
		}
		if scale == 0 {
			if gv != 0 {
				t.Errorf("%s[%d] = %v, want 0", name, i, gv)
			}
			continue
		}
		if e := math.Abs(gv-wv) / scale; e > worst {
			worst, worstAt = e, i
		}
	}
	if worst > tol {
		t.Errorf("%s: relative error %.3g at [%d] (got %v, want %v) exceeds %.0e", name, worst, worstAt, g[worstAt], w[worstAt], tol)
	}
	if testing.Verbose() {
		elem := 0.0 // the largest elementwise relative error, for the record
		for i := range w {
			if wv := math.Abs(float64(w[i])); wv > 0 && !math.IsInf(wv, 0) && !math.IsNaN(wv) {
				elem = math.Max(elem, math.Abs(float64(g[i])-float64(w[i]))/wv)
			}
		}
		t.Logf("%s: normwise relative error %.2g, elementwise %.2g", name, worst, elem)
	}
}

// assertPrinted checks got against the digits a seed document prints (PyTorch's 4-decimal
// format, row-major, whitespace/commas/brackets ignored; "-inf" and "inf" allowed). With
// ulps > 0 a value also matches when a float32 at most ulps steps away prints as the seed does:
// for the few numbers whose last printed digit depends on the seed machine's BLAS (see
// TestSeed000).
func assertPrinted(t *testing.T, name string, got *tensors.Tensor, printed string, ulps int) {
	t.Helper()
	want := strings.FieldsFunc(printed, func(r rune) bool {
		return r == ' ' || r == ',' || r == '[' || r == ']' || r == '\n' || r == '\t'
	})
	g := flat(got)
	if len(g) != len(want) {
		t.Errorf("%s: %d values, the seed prints %d", name, len(g), len(want))
		return
	}
	for i, w := range want {
		s := formatPrinted(g[i], w)
		ok := s == w
		for k, lo, hi := 0, g[i], g[i]; k < ulps && !ok; k++ {
			lo, hi = math.Nextafter32(lo, float32(math.Inf(-1))), math.Nextafter32(hi, float32(math.Inf(1)))
			ok = formatPrinted(lo, w) == w || formatPrinted(hi, w) == w
		}
		if !ok {
			t.Errorf("%s[%d] = %s (%v), the seed prints %s", name, i, s, g[i], w)
		}
	}
}

// formatPrinted formats v as PyTorch prints it in a tensor whose element reads like.
func formatPrinted(v float32, like string) string {
	switch f := float64(v); {
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsInf(f, 1):
		return "inf"
	case like[len(like)-1] == '.': // PyTorch prints tensors of integral floats as "2."
		return strconv.FormatFloat(f, 'f', 0, 64) + "."
	default:
		decimals := 0
		if dot := strings.IndexByte(like, '.'); dot >= 0 {
			decimals = len(like) - dot - 1
		}
		s := strconv.FormatFloat(f, 'f', decimals, 64)
		if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
			s = s[1:] // PyTorch prints -0.0000 as 0.0000 (it prints -0. only for -0.0 itself)
		}
		return s
	}
}
