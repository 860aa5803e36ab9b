package eager

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// goldenFile holds PyTorch's results, written by testdata/gen_goldens.py.
const goldenFile = "testdata/goldens.json"

// update regenerates goldenFile: go test ./pkg/eager -run TestGoldens -update
var update = flag.Bool("update", false, "regenerate "+goldenFile+" with /usr/bin/python3 (Debian's PyTorch 1.13)")

func updateGoldens(t testing.TB) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "testdata/gen_goldens.py")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+referenceBLAS) // Not OpenBLAS: see gen_goldens.py.
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running testdata/gen_goldens.py: %v", err)
	}
	if err := os.WriteFile(goldenFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// referenceBLAS is where Debian's libblas3 keeps the reference BLAS (libblas.so.3).
const referenceBLAS = "/usr/lib/x86_64-linux-gnu/blas"

// maxRelErr is the largest relative error accepted for float arithmetic against PyTorch.
const maxRelErr = 1e-6

type goldenTensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  []any  `json:"data"`
}

type goldenCase struct {
	Name       string          `json:"name"`
	Op         string          `json:"op"`
	Args       map[string]any  `json:"args"`
	Inputs     []*goldenTensor `json:"inputs"`
	Exact      bool            `json:"exact"`
	Want       *goldenTensor   `json:"want"`
	WantBool   *bool           `json:"want_bool"`
	WantNumber any             `json:"want_number"`
}

func loadGoldens(t testing.TB) []goldenCase {
	t.Helper()
	raw, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("reading goldens: %v", err)
	}
	var file struct {
		Torch string       `json:"torch"`
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("decoding %s: %v", goldenFile, err)
	}
	if len(file.Cases) < 100 {
		t.Fatalf("%s has only %d cases", goldenFile, len(file.Cases))
	}
	return file.Cases
}

// num decodes a golden number: a JSON number or "inf", "-inf", "nan".
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	case string:
		switch x {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
	}
	panic(fmt.Sprintf("bad golden number %#v", v))
}

func (g *goldenTensor) tensor() *tensors.Tensor {
	n := len(g.Data)
	switch g.DType {
	case "float32":
		data := make([]float32, n)
		for i, v := range g.Data {
			data[i] = float32(num(v))
		}
		return tensors.FromFlatDataAndDimensions(data, g.Shape...)
	case "float64":
		data := make([]float64, n)
		for i, v := range g.Data {
			data[i] = num(v)
		}
		return tensors.FromFlatDataAndDimensions(data, g.Shape...)
	case "int64":
		data := make([]int64, n)
		for i, v := range g.Data {
			data[i] = int64(num(v))
		}
		return tensors.FromFlatDataAndDimensions(data, g.Shape...)
	case "bool":
		data := make([]bool, n)
		for i, v := range g.Data {
			data[i] = v.(bool)
		}
		return tensors.FromFlatDataAndDimensions(data, g.Shape...)
	}
	panic("unknown golden dtype " + g.DType)
}

func (c *goldenCase) int(name string) int   { return int(num(c.Args[name])) }
func (c *goldenCase) f(name string) float64 { return num(c.Args[name]) }
func (c *goldenCase) bool(name string) bool { return c.Args[name].(bool) }
func (c *goldenCase) ints(name string) []int {
	var out []int
	for _, v := range c.Args[name].([]any) {
		out = append(out, int(num(v)))
	}
	return out
}

// runGolden calls the eager operation a golden case describes.
func runGolden(c *goldenCase) (out *tensors.Tensor, b *bool, x *float64) {
	in := make([]*tensors.Tensor, len(c.Inputs))
	for i, g := range c.Inputs {
		in[i] = g.tensor()
	}
	scalarOps := map[string]func(*tensors.Tensor, float64) *tensors.Tensor{
		"add_scalar": AddScalar, "sub_scalar": SubScalar, "mul_scalar": MulScalar,
		"div_scalar": DivScalar, "pow_scalar": PowScalar,
	}
	binaryOps := map[string]func(a, b *tensors.Tensor) *tensors.Tensor{
		"add": Add, "sub": Sub, "mul": Mul, "div": Div, "pow": Pow, "matmul": MatMul, "dot": Dot,
	}
	unaryOps := map[string]func(*tensors.Tensor) *tensors.Tensor{
		"T": T, "MT": MT, "contiguous": Contiguous, "neg": Neg, "exp": Exp, "sqrt": Sqrt, "abs": Abs,
		"not": Not, "sum_all": SumAll, "max_all": MaxAll, "float": Float, "long": Long, "bool": Bool,
	}
	reduceOps := map[string]func(*tensors.Tensor, int, bool) *tensors.Tensor{
		"sum": Sum, "max": Max, "mean": Mean, "argmax": ArgMax,
	}
	if fn, ok := scalarOps[c.Op]; ok {
		return fn(in[0], c.f("s")), nil, nil
	}
	if fn, ok := binaryOps[c.Op]; ok {
		return fn(in[0], in[1]), nil, nil
	}
	if fn, ok := unaryOps[c.Op]; ok {
		return fn(in[0]), nil, nil
	}
	if fn, ok := reduceOps[c.Op]; ok {
		return fn(in[0], c.int("dim"), c.bool("keepdim")), nil, nil
	}
	switch c.Op {
	case "transpose":
		return Transpose(in[0], c.int("dim0"), c.int("dim1")), nil, nil
	case "permute":
		return Permute(in[0], c.ints("dims")...), nil, nil
	case "view":
		return View(in[0], c.ints("dims")...), nil, nil
	case "reshape":
		return Reshape(in[0], c.ints("dims")...), nil, nil
	case "unsqueeze":
		return Unsqueeze(in[0], c.int("dim")), nil, nil
	case "squeeze":
		return Squeeze(in[0], c.int("dim")), nil, nil
	case "stack":
		return Stack(c.int("dim"), in...), nil, nil
	case "cat":
		return Cat(c.int("dim"), in...), nil, nil
	case "index":
		return Index(in[0], c.int("i")), nil, nil
	case "slice":
		return Slice(in[0], c.int("dim"), c.int("start"), c.int("end")), nil, nil
	case "softmax":
		return Softmax(in[0], c.int("dim")), nil, nil
	case "masked_fill":
		return MaskedFill(in[0], in[1], c.f("value")), nil, nil
	case "ones":
		return Ones(c.ints("dims")...), nil, nil
	case "zeros":
		return Zeros(c.ints("dims")...), nil, nil
	case "full":
		return Full(c.f("value"), c.ints("dims")...), nil, nil
	case "arange":
		return Arange(c.int("n")), nil, nil
	case "triu":
		return Triu(in[0], c.int("diagonal")), nil, nil
	case "tril":
		return Tril(in[0], c.int("diagonal")), nil, nil
	case "eq":
		return Eq(in[0], c.f("value")), nil, nil
	case "linear":
		var bias *tensors.Tensor
		if len(in) == 3 {
			bias = in[2]
		}
		return Linear(in[0], in[1], bias), nil, nil
	case "allclose":
		r := AllClose(in[0], in[1], c.f("rtol"), c.f("atol"))
		return nil, &r, nil
	case "item":
		r := Item(in[0])
		return nil, nil, &r
	}
	panic("golden op not handled by the test: " + c.Op)
}

// flat returns t's values as float64 (bools as 0/1).
func flat(t *tensors.Tensor) []float64 {
	var out []float64
	t.MustConstFlatData(func(f any) {
		switch v := f.(type) {
		case []float32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []float64:
			out = append(out, v...)
		case []int64:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []int32:
			for _, x := range v {
				out = append(out, float64(x))
			}
		case []bool:
			for _, x := range v {
				out = append(out, num(x))
			}
		default:
			panic(fmt.Sprintf("unexpected flat %T", f))
		}
	})
	return out
}

// sameFloat: bit-identical values (NaN equals NaN).
func sameFloat(a, b float64) bool {
	return a == b && math.Signbit(a) == math.Signbit(b) || math.IsNaN(a) && math.IsNaN(b)
}

// compareGolden checks got against c.Want; it returns whether every value matched bit for bit.
func compareGolden(t *testing.T, c *goldenCase, got *tensors.Tensor) (bitExact bool) {
	t.Helper()
	want := c.Want
	if gotDT := dtypeName(got.DType()); gotDT != want.DType {
		t.Errorf("dtype %s, want %s", gotDT, want.DType)
		return false
	}
	if !slices.Equal(got.Shape().Dimensions, want.Shape) && !(len(want.Shape) == 0 && got.Rank() == 0) {
		t.Errorf("shape %v, want %v", got.Shape().Dimensions, want.Shape)
		return false
	}
	g := flat(got)
	bitExact = true
	bad := 0
	for i, wv := range want.Data {
		w := num(wv)
		if sameFloat(g[i], w) || (w == 0 && g[i] == 0) {
			continue
		}
		bitExact = false
		rel := math.Abs(g[i]-w) / math.Abs(w)
		if c.Exact || !(rel <= maxRelErr) {
			if bad < 5 {
				t.Errorf("element %d: got %.9g, want %.9g (relative error %.3g, exact=%v)", i, g[i], w, rel, c.Exact)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("… %d mismatching elements of %d", bad, len(want.Data))
	}
	return bitExact
}

// TestGoldens runs every case of testdata/goldens.json: every eager operation, on the values and
// intermediate results of seeds 000, 001 and 002 and on several shapes, dtypes and dims each,
// against PyTorch 1.13's results.
func TestGoldens(t *testing.T) {
	if *update {
		updateGoldens(t)
	}
	cases := loadGoldens(t)
	var floatCases, floatBitExact int
	var notExact []string
	for i := range cases {
		c := &cases[i]
		t.Run(c.Name, func(t *testing.T) {
			out, b, x := runGolden(c)
			switch {
			case c.WantBool != nil:
				if b == nil || *b != *c.WantBool {
					t.Errorf("got %v, want %v", b, *c.WantBool)
				}
			case c.WantNumber != nil:
				if x == nil || !sameFloat(*x, num(c.WantNumber)) {
					t.Errorf("got %v, want %v", x, num(c.WantNumber))
				}
			default:
				exact := compareGolden(t, c, out)
				if !c.Exact && strings.HasPrefix(c.Want.DType, "float") {
					floatCases++
					if exact {
						floatBitExact++
					} else {
						notExact = append(notExact, c.Name)
					}
				}
			}
		})
	}
	t.Logf("%d golden cases; float arithmetic bit-identical to PyTorch in %d of %d cases; within %g: %s",
		len(cases), floatBitExact, floatCases, maxRelErr, strings.Join(notExact, "; "))
}

// TestSeed001DotsBitExact: seed 001 cell [2] prints six dot products at full float32 precision;
// eager.Dot must reproduce every digit (PyTorch accumulates x_i·query in float32, left to right).
func TestSeed001DotsBitExact(t *testing.T) {
	inputs := Tensor([][]float64{
		{0.43, 0.15, 0.89}, {0.55, 0.87, 0.66}, {0.57, 0.85, 0.64},
		{0.22, 0.58, 0.33}, {0.77, 0.25, 0.10}, {0.05, 0.80, 0.55},
	})
	printed := []string{ // print(f"... dot: {attn_scores_2[i]}")
		"0.9544000625610352", "1.4950001239776611", "1.4754000902175903",
		"0.8434000015258789", "0.7070000171661377", "1.0865000486373901",
	}
	query := Index(inputs, 1)
	for i, want := range printed {
		got := Item(Dot(Index(inputs, i), query))
		if s := pyFloatRepr(got); s != want {
			t.Errorf("x_%d.dot(query) = %s, PyTorch printed %s", i, s, want)
		}
	}
	// Cell [7]: the same numbers come out of inputs @ inputs.T.
	scores := MatMul(inputs, T(inputs))
	row := flat(Index(scores, 1))
	for i, want := range printed {
		if s := pyFloatRepr(row[i]); s != want {
			t.Errorf("(inputs @ inputs.T)[1, %d] = %s, PyTorch printed %s", i, s, want)
		}
	}
}

// pyFloatRepr formats a float64 the way Python's repr does (shortest round-trip digits).
func pyFloatRepr(x float64) string {
	s := fmt.Sprintf("%v", x)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

func TestGoldenDTypesCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadGoldens(t) {
		if c.Want != nil {
			seen[c.Op+"/"+c.Want.DType] = true
		}
	}
	for _, k := range []string{"matmul/float32", "matmul/int64", "softmax/float32", "masked_fill/float32",
		"masked_fill/int64", "sum/int64", "stack/int64", "div/float32", "add/bool", "triu/bool"} {
		if !seen[k] {
			t.Errorf("goldens have no %s case", k)
		}
	}
	_ = dtypes.Float32
}
