package torchrand

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

var update = flag.Bool("update", false, "regenerate testdata/goldens.json with /usr/bin/python3 and PyTorch before testing")

const goldensPath = "testdata/goldens.json"

type goldenOp struct {
	Op     string  `json:"op"`
	Dims   []int   `json:"dims"`
	N      int     `json:"n"`
	From   float64 `json:"from"`
	To     float64 `json:"to"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	In     int     `json:"in"`
	Out    int     `json:"out"`
	Bias   bool    `json:"bias"`
	P      float64 `json:"p"`
	Repeat int     `json:"repeat"`
}

type goldenTensor struct {
	DType  string `json:"dtype"`
	Shape  []int  `json:"shape"`
	Bits   string `json:"bits"`
	SHA256 string `json:"sha256"`
	Head   string `json:"head"`
	Tail   string `json:"tail"`
}

type goldenCase struct {
	Name string           `json:"name"`
	Seed int64            `json:"seed"`
	Ops  []goldenOp       `json:"ops"`
	Out  [][]goldenTensor `json:"out"`
}

type goldenFile struct {
	Torch string       `json:"torch"`
	Cases []goldenCase `json:"cases"`
}

func loadGoldens(t *testing.T) *goldenFile {
	t.Helper()
	if *update {
		cmd := exec.Command("/usr/bin/python3", filepath.Join("testdata", "gen_goldens.py"))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("-update: %v", err)
		}
	}
	data, err := os.ReadFile(goldensPath)
	if err != nil {
		t.Fatal(err)
	}
	var gf goldenFile
	if err := json.Unmarshal(data, &gf); err != nil {
		t.Fatal(err)
	}
	if len(gf.Cases) == 0 {
		t.Fatal("no golden cases")
	}
	return &gf
}

// value is one op's result: the flat values (float32 or float64 bit patterns) and the shape.
type value struct {
	bits  []uint64
	width int // 32 or 64
	shape []int
}

func fromFloat32s(v []float32, shape []int) value {
	b := make([]uint64, len(v))
	for i, f := range v {
		b[i] = uint64(math.Float32bits(f))
	}
	return value{bits: b, width: 32, shape: shape}
}

func fromTensor(t *tensors.Tensor) value {
	return fromFloat32s(tensors.MustCopyFlatData[float32](t), t.Shape().Dimensions)
}

// dropoutX is gen_goldens.py's dropout_x input: x[i] = (i%23 - 11) · 0.375.
func dropoutX(dims []int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%23-11) * 0.375
	}
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

// runOp replays one golden op on g.
func runOp(t *testing.T, g *Generator, op goldenOp) []value {
	switch op.Op {
	case "rand":
		return []value{fromTensor(g.Rand(op.Dims...))}
	case "rand64":
		n := 1
		for _, d := range op.Dims {
			n *= d
		}
		f := make([]float64, n)
		g.Float64s(f)
		b := make([]uint64, n)
		for i, v := range f {
			b[i] = math.Float64bits(v)
		}
		return []value{{bits: b, width: 64, shape: op.Dims}}
	case "randn":
		return []value{fromTensor(g.Randn(op.Dims...))}
	case "uniform":
		v := make([]float32, op.N)
		g.Uniform(v, op.From, op.To)
		return []value{fromFloat32s(v, []int{op.N})}
	case "normal":
		v := make([]float32, op.N)
		g.Normal(v, op.Mean, op.Std)
		return []value{fromFloat32s(v, []int{op.N})}
	case "linear":
		w, b := g.Linear(op.In, op.Out, op.Bias)
		if (b != nil) != op.Bias {
			t.Fatalf("Linear(%d, %d, %v) returned bias %v", op.In, op.Out, op.Bias, b)
		}
		if !op.Bias {
			return []value{fromTensor(w)}
		}
		return []value{fromTensor(w), fromTensor(b)}
	case "dropout":
		// Dropout(p) on ones is the mask itself; Dropout proper is replayed by "dropout_x" (and
		// on ones by TestSpecVectors).
		return []value{fromTensor(g.DropoutMask(op.P, op.Dims...))}
	case "dropout_x":
		return []value{fromTensor(g.Dropout(dropoutX(op.Dims), op.P))}
	}
	t.Fatalf("unknown golden op %q", op.Op)
	return nil
}

// stack concatenates repeated results along a new leading axis.
func stack(vs []value) value {
	out := value{width: vs[0].width, shape: append([]int{len(vs)}, vs[0].shape...)}
	for _, v := range vs {
		out.bits = append(out.bits, v.bits...)
	}
	return out
}

func (v value) hexes() []string {
	h := make([]string, len(v.bits))
	for i, b := range v.bits {
		h[i] = fmt.Sprintf("%0*x", v.width/4, b)
	}
	return h
}

func (v value) sha256() string {
	buf := make([]byte, 0, len(v.bits)*v.width/8)
	for _, b := range v.bits {
		if v.width == 32 {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(b))
		} else {
			buf = binary.LittleEndian.AppendUint64(buf, b)
		}
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

func splitHex(s string, width int) []string {
	var out []string
	for i := 0; i+width <= len(s); i += width {
		out = append(out, s[i:i+width])
	}
	return out
}

// compare checks got against the golden record bit for bit, reporting the first mismatches.
func compare(t *testing.T, where string, got value, want goldenTensor) {
	t.Helper()
	wantWidth := map[string]int{"float32": 32, "float64": 64}[want.DType]
	if got.width != wantWidth {
		t.Errorf("%s: dtype float%d, want %s", where, got.width, want.DType)
		return
	}
	if fmt.Sprint(got.shape) != fmt.Sprint(want.Shape) && !(len(got.shape) == 0 && len(want.Shape) == 0) {
		t.Errorf("%s: shape %v, want %v", where, got.shape, want.Shape)
		return
	}
	h := got.hexes()
	if want.SHA256 != "" {
		if s := got.sha256(); s != want.SHA256 {
			t.Errorf("%s: sha256 %s, want %s", where, s, want.SHA256)
		}
		head, tail := splitHex(want.Head, wantWidth/4), splitHex(want.Tail, wantWidth/4)
		diffs(t, where+" head", h[:len(head)], head, got.width)
		diffs(t, where+" tail", h[len(h)-len(tail):], tail, got.width)
		return
	}
	diffs(t, where, h, splitHex(want.Bits, wantWidth/4), got.width)
}

func diffs(t *testing.T, where string, got, want []string, width int) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", where, len(got), len(want))
		return
	}
	var msgs []string
	n := 0
	for i := range got {
		if got[i] != want[i] {
			n++
			if len(msgs) < 5 {
				msgs = append(msgs, fmt.Sprintf("[%d] %s (%s), want %s (%s)", i, got[i], show(got[i], width), want[i], show(want[i], width)))
			}
		}
	}
	if n > 0 {
		t.Errorf("%s: %d of %d values differ: %s", where, n, len(got), strings.Join(msgs, "; "))
	}
}

func show(h string, width int) string {
	var b uint64
	fmt.Sscanf(h, "%x", &b)
	if width == 32 {
		return fmt.Sprint(math.Float32frombits(uint32(b)))
	}
	return fmt.Sprint(math.Float64frombits(b))
}

// TestGoldens replays every case of testdata/goldens.json (produced by PyTorch 1.13) and compares
// bit patterns.
func TestGoldens(t *testing.T) {
	gf := loadGoldens(t)
	values := 0
	for _, c := range gf.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if len(c.Out) != len(c.Ops) {
				t.Fatalf("golden case has %d ops and %d outputs", len(c.Ops), len(c.Out))
			}
			g := New(c.Seed)
			for i, op := range c.Ops {
				k := max(op.Repeat, 1)
				runs := make([][]value, k)
				for r := range runs {
					runs[r] = runOp(t, g, op)
				}
				got := runs[0]
				if k > 1 {
					got = make([]value, len(runs[0]))
					for j := range got {
						col := make([]value, k)
						for r := range runs {
							col[r] = runs[r][j]
						}
						got[j] = stack(col)
					}
				}
				if len(got) != len(c.Out[i]) {
					t.Fatalf("op %d (%s): %d results, want %d", i, op.Op, len(got), len(c.Out[i]))
				}
				for j := range got {
					values += len(got[j].bits)
					compare(t, fmt.Sprintf("op %d %+v result %d", i, op, j), got[j], c.Out[i][j])
				}
			}
		})
	}
	t.Logf("%d cases, %d values compared (torch %s)", len(gf.Cases), values, gf.Torch)
}
