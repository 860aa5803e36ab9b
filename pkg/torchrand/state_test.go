package torchrand

import (
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// TestState: a generator restored from State continues exactly as the original, the cached
// normal value included; bytes State did not write are refused and leave the generator as it was.
func TestState(t *testing.T) {
	g := New(1337)
	g.Randn(3) // leaves a cached normal value
	g.Randint(0, 100, 5)
	saved := g.State()
	want := append(tensorFloats(g.Randn(1)), tensorFloats(g.Rand(40))...)
	r := New(7)
	if err := r.SetState(saved); err != nil {
		t.Fatal(err)
	}
	got := append(tensorFloats(r.Randn(1)), tensorFloats(r.Rand(40))...)
	if !slices.Equal(got, want) {
		t.Errorf("after SetState: %v, want %v", got[:4], want[:4])
	}
	if r.InitialSeed() != 1337 {
		t.Errorf("InitialSeed %d, want 1337", r.InitialSeed())
	}
	bad := map[string][]byte{
		"short": saved[:100],
		"long":  append(slices.Clone(saved), 0),
		"magic": append([]byte("x"), saved[1:]...),
		"index": func() []byte { b := slices.Clone(saved); b[len(stateMagic)+7] = 0xff; return b }(),
		"flag":  func() []byte { b := slices.Clone(saved); b[len(b)-1] = 2; return b }(),
	}
	want2 := tensorFloats(New(5).Rand(3))
	for name, b := range bad {
		h := New(5)
		err := h.SetState(b)
		if err == nil || !strings.HasPrefix(err.Error(), "torchrand.Generator.SetState: ") {
			t.Errorf("%s: error %v", name, err)
		}
		if !slices.Equal(tensorFloats(h.Rand(3)), want2) {
			t.Errorf("%s: a refused state changed the generator", name)
		}
	}
}

func tensorFloats(x *tensors.Tensor) []float32 { return tensors.MustCopyFlatData[float32](x) }
