package display

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
)

// textGoldens is testdata/text_goldens.json, written by testdata/gen_text_goldens.py.
type textGoldens struct {
	Generator string `json:"generator"`
	Cases     []struct {
		Name     string         `json:"name"`
		DType    string         `json:"dtype"`
		Shape    []int          `json:"shape"`
		Values   []any          `json:"values"`
		Expected string         `json:"expected"`
		Options  map[string]any `json:"options"`
		Suffixes []string       `json:"suffixes"`
	} `json:"cases"`
	Floats []struct {
		Value    string `json:"value"`
		Expected string `json:"expected"`
		FString  string `json:"fstring"`
	} `json:"floats"`
	Items []struct {
		DType    string `json:"dtype"`
		Shape    []int  `json:"shape"`
		Values   []any  `json:"values"`
		Expected string `json:"expected"`
	} `json:"items"`
	Sizes []struct {
		Dims     []int  `json:"dims"`
		Expected string `json:"expected"`
	} `json:"sizes"`
}

const textGoldensPath = "testdata/text_goldens.json"

// loadTextGoldens reads the goldens (numbers kept exact as json.Number), regenerating them
// first under -update.
func loadTextGoldens(t *testing.T) *textGoldens {
	t.Helper()
	if *update {
		regenOnce.Do(func() { regenerateTextGoldens(t) })
	}
	data, err := os.ReadFile(textGoldensPath)
	if err != nil {
		t.Fatal(err)
	}
	var g textGoldens
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&g); err != nil {
		t.Fatal(err)
	}
	return &g
}

var regenOnce sync.Once

// regenerateTextGoldens runs the PyTorch generator (Debian's python3 has torch 1.13).
func regenerateTextGoldens(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("-update needs %s with torch to regenerate %s: %v", python, textGoldensPath, err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "gen_text_goldens.py"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gen_text_goldens.py: %v", err)
	}
	if err := os.WriteFile(textGoldensPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldenTensor builds the tensor a golden case describes.
func goldenTensor(t *testing.T, dtype string, shape []int, vals []any) *tensors.Tensor {
	t.Helper()
	floats := func() []float64 {
		out := make([]float64, len(vals))
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				t.Fatalf("float value %v is not a repr string", v)
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = f
		}
		return out
	}
	ints := func() []int64 {
		out := make([]int64, len(vals))
		for i, v := range vals {
			f, ok := v.(json.Number)
			if !ok {
				t.Fatalf("int value %v (%T) is not a number", v, v)
			}
			n, err := f.Int64()
			if err != nil {
				t.Fatal(err)
			}
			out[i] = n
		}
		return out
	}
	switch dtype {
	case "float32":
		f := floats()
		data := make([]float32, len(f))
		for i, x := range f {
			data[i] = float32(x)
			if float64(data[i]) != x && !math.IsNaN(x) {
				t.Fatalf("value %v is not a float32", x)
			}
		}
		return tensors.FromFlatDataAndDimensions(data, shape...)
	case "float64":
		return tensors.FromFlatDataAndDimensions(floats(), shape...)
	case "float16":
		f := floats()
		data := make([]float16.Float16, len(f))
		for i, x := range f {
			data[i] = float16.FromFloat32(float32(x))
		}
		return tensors.FromFlatDataAndDimensions(data, shape...)
	case "bfloat16":
		f := floats()
		data := make([]bfloat16.BFloat16, len(f))
		for i, x := range f {
			data[i] = bfloat16.FromFloat64(x)
			if float64(data[i].Float32()) != x {
				t.Fatalf("value %v is not a bfloat16", x)
			}
		}
		return tensors.FromFlatDataAndDimensions(data, shape...)
	case "int8":
		return tensors.FromFlatDataAndDimensions(convertInts[int8](ints()), shape...)
	case "int16":
		return tensors.FromFlatDataAndDimensions(convertInts[int16](ints()), shape...)
	case "uint8":
		return tensors.FromFlatDataAndDimensions(convertInts[uint8](ints()), shape...)
	case "int64":
		return tensors.FromFlatDataAndDimensions(ints(), shape...)
	case "int32":
		n := ints()
		data := make([]int32, len(n))
		for i, x := range n {
			data[i] = int32(x)
		}
		return tensors.FromFlatDataAndDimensions(data, shape...)
	case "bool":
		data := make([]bool, len(vals))
		for i, v := range vals {
			data[i] = v.(bool)
		}
		return tensors.FromFlatDataAndDimensions(data, shape...)
	}
	t.Fatalf("unknown dtype %q", dtype)
	return nil
}

// TestFormatGoldens compares Format with what PyTorch printed for every golden case,
// including every tensor printed in the seed notebooks.
func TestFormatGoldens(t *testing.T) {
	g := loadTextGoldens(t)
	if len(g.Cases) < 300 {
		t.Fatalf("only %d golden cases in %s", len(g.Cases), textGoldensPath)
	}
	seeds := 0
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			tensor := goldenTensor(t, c.DType, c.Shape, c.Values)
			opts := DefaultPrintOptions()
			for k, v := range c.Options {
				switch k {
				case "precision":
					opts.Precision = jsonInt(t, v)
				case "threshold":
					opts.Threshold = jsonInt(t, v)
				case "edgeitems":
					opts.EdgeItems = jsonInt(t, v)
				case "linewidth":
					opts.Linewidth = jsonInt(t, v)
				case "sci_mode":
					opts.SciMode = SciOff
					if v.(bool) {
						opts.SciMode = SciOn
					}
				default:
					t.Fatalf("unknown option %q", k)
				}
			}
			opts.Suffixes = c.Suffixes
			got := FormatWith(tensor, opts)
			if c.Options == nil && c.Suffixes == nil {
				if f := Format(tensor); f != got {
					t.Fatalf("Format and FormatWith(DefaultPrintOptions()) differ:\n%s\n%s", f, got)
				}
			}
			if got != c.Expected {
				t.Errorf("%s %v %v:\nwant (PyTorch):\n%s\ngot:\n%s", c.DType, c.Shape, c.Options, c.Expected, got)
			}
		})
		if len(c.Name) > 4 && c.Name[:4] == "seed" {
			seeds++
		}
	}
	if seeds < 40 {
		t.Errorf("only %d seed tensors in the goldens", seeds)
	}
}

func jsonInt(t *testing.T, v any) int {
	t.Helper()
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func TestFloatItemSizeGoldens(t *testing.T) {
	g := loadTextGoldens(t)
	for _, c := range g.Floats {
		f, err := strconv.ParseFloat(c.Value, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := Float(float32(f)); got != c.Expected {
			t.Errorf("Float(%v) = %q, Python repr %q", f, got, c.Expected)
		}
		if got := Item(tensors.FromScalar(float32(f))); got != c.FString {
			t.Errorf("Item(tensor(%v)) = %q, f-string %q", f, got, c.FString)
		}
	}
	for _, c := range g.Items {
		tensor := goldenTensor(t, c.DType, c.Shape, c.Values)
		if got := Item(tensor); got != c.Expected {
			t.Errorf("Item(%s %v) = %q, want %q", c.DType, c.Shape, got, c.Expected)
		}
	}
	for _, c := range g.Sizes {
		if got := Size(c.Dims...); got != c.Expected {
			t.Errorf("Size(%v) = %q, want %q", c.Dims, got, c.Expected)
		}
	}
	if len(g.Floats) < 20 || len(g.Items) < 5 || len(g.Sizes) < 5 {
		t.Errorf("too few float/item/size goldens: %d/%d/%d", len(g.Floats), len(g.Items), len(g.Sizes))
	}
}

func TestFormatErrorsAndShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"nil", Format(nil), "tensor(<error: tensor is nil>)"},
		{"item nil", Item(nil), "<error: tensor is nil>"},
		{"item many", Item(tensors.FromValue([]float32{1, 2})),
			"<error: only one element tensors can be converted to Python scalars, shape is torch.Size([2])>"},
		{"shape", Shape(tensors.FromFlatDataAndDimensions(make([]float32, 36), 2, 6, 3)), "torch.Size([2, 6, 3])"},
		{"shape scalar", Shape(tensors.FromScalar(int64(3))), "torch.Size([])"},
		{"shape nil", Shape(nil), "torch.Size(<nil tensor>)"},
		{"uint8", Format(tensors.FromValue([]uint8{1, 255})), "tensor([  1, 255], dtype=torch.uint8)"},
		{"uint64", Format(tensors.FromValue([]uint64{math.MaxUint64, 0})),
			"tensor([18446744073709551615,                    0], dtype=torch.uint64)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func itoa(i int) string { return fmt.Sprint(i) }

func convertInts[T int8 | int16 | uint8](in []int64) []T {
	out := make([]T, len(in))
	for i, x := range in {
		out[i] = T(x)
	}
	return out
}
