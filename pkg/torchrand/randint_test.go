package torchrand

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

var updateRandint = flag.Bool("update-randint", false,
	"regenerate testdata/randint_goldens.json with /usr/bin/python3 and PyTorch before testing")

const randintGoldensPath = "testdata/randint_goldens.json"

type randintGoldenOp struct {
	Op   string `json:"op"`
	Low  int64  `json:"low"`
	High int64  `json:"high"`
	Dims []int  `json:"dims"`
}

type randintGoldenOut struct {
	Shape  []int   `json:"shape"`
	Values []int64 `json:"values"`
}

type randintGoldenCase struct {
	Name string             `json:"name"`
	Seed int64              `json:"seed"`
	Ops  []randintGoldenOp  `json:"ops"`
	Out  []randintGoldenOut `json:"out"`
}

// TestRandintGoldens replays testdata/randint_goldens.json (torch.randint, with torch.rand after
// it to check the stream position) and compares every value exactly.
func TestRandintGoldens(t *testing.T) {
	if *updateRandint {
		cmd := exec.Command("/usr/bin/python3", "gen_randint_goldens.py")
		cmd.Dir = "testdata"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_randint_goldens.py: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile(randintGoldensPath)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Torch string              `json:"torch"`
		Cases []randintGoldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 10 {
		t.Fatalf("%s has %d cases, want at least 10", randintGoldensPath, len(file.Cases))
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			g := New(c.Seed)
			for i, op := range c.Ops {
				var shape []int
				var got []int64
				switch op.Op {
				case "randint":
					tt := g.Randint(op.Low, op.High, op.Dims...)
					shape = tt.Shape().Dimensions
					got = tensors.MustCopyFlatData[int64](tt)
				case "rand":
					tt := g.Rand(op.Dims...)
					shape = tt.Shape().Dimensions
					for _, v := range tensors.MustCopyFlatData[float32](tt) {
						got = append(got, int64(math.Float32bits(v)))
					}
				default:
					t.Fatalf("unknown op %q", op.Op)
				}
				want := c.Out[i]
				if !slices.Equal(shape, want.Shape) && !(len(shape) == 0 && len(want.Shape) == 0) {
					t.Fatalf("op %d (%s): shape %v, want %v", i, op.Op, shape, want.Shape)
				}
				if len(got) != len(want.Values) {
					t.Fatalf("op %d (%s): %d values, want %d", i, op.Op, len(got), len(want.Values))
				}
				for j := range got {
					if got[j] != want.Values[j] {
						t.Fatalf("op %d (%s) value %d: got %d, want %d", i, op.Op, j, got[j], want.Values[j])
					}
				}
			}
		})
	}
}

// TestRandintEngineOutputs pins the transformation: one Random() per value below 2^32, two
// (Random64) from 2^32 on.
func TestRandintEngineOutputs(t *testing.T) {
	tests := []struct {
		name      string
		low, high int64
		n         int
		draws     int // engine outputs consumed
	}{
		{"narrow", 0, 10, 5, 5},
		{"2^32-1", 0, 1<<32 - 1, 3, 3},
		{"2^32", 0, 1 << 32, 3, 6},
		{"wide negative", -(1 << 40), 1 << 40, 4, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, ref := New(2024), New(2024)
			dst := make([]int64, tc.n)
			g.FillRandint(dst, tc.low, tc.high)
			r := uint64(tc.high - tc.low)
			for i, v := range dst {
				var want int64
				if r >= 1<<32 {
					want = int64(ref.Random64()%r) + tc.low
				} else {
					want = int64(uint64(ref.Random())%r) + tc.low
				}
				if v != want {
					t.Fatalf("value %d = %d, want %d", i, v, want)
				}
				if v < tc.low || v >= tc.high {
					t.Fatalf("value %d = %d outside [%d, %d)", i, v, tc.low, tc.high)
				}
			}
			check := New(2024)
			for range tc.draws {
				check.Random()
			}
			if a, b := g.Random(), check.Random(); a != b {
				t.Fatalf("after %d values the stream is off: next output %d, want %d (expected %d draws)", tc.n, a, b, tc.draws)
			}
		})
	}
}

func TestRandintErrors(t *testing.T) {
	g := New(0)
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"empty range", func() { g.Randint(5, 5, 3) }, "torchrand.Randint: high must be > low, got low=5, high=5"},
		{"reversed", func() { g.FillRandint(make([]int64, 2), 3, -1) }, "torchrand.FillRandint: high must be > low, got low=3, high=-1"},
		{"overflow", func() { g.Randint(math.MinInt64, math.MaxInt64, 1) }, "torchrand.Randint: high - low must fit in an int64, got low=-9223372036854775808, high=9223372036854775807"},
		{"negative dim", func() { g.Randint(0, 3, 2, -1) }, "torchrand.Randint: dims[1] must be >= 0, got -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Catch(tc.fn)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("error %v does not match ErrInvalidArgument", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err.Error(), tc.want)
			}
		})
	}
}

func ExampleGenerator_Randint() {
	g := New(123)
	ids := g.Randint(0, 10, 8)
	fmt.Println(tensors.MustCopyFlatData[int64](ids))
	// Output: [2 9 2 0 0 2 6 7]
}
