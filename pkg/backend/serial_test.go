package backend

import (
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// TestSerial: the go backend's serial twin is another go backend, the same one on every call,
// computes what the default one computes, and starts without printing.
func TestSerial(t *testing.T) {
	b := MustDefault()
	if !IsGo(b) {
		t.Skipf("backend %s: Serial returns it unchanged", b)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	s, err := Serial(b)
	os.Stdout = stdout
	w.Close()
	printed, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(printed) > 0 {
		t.Errorf("Serial printed %q", printed)
	}
	if s == b || !IsGo(s) {
		t.Fatalf("Serial(%s) = %s (the same: %v), want another go backend", b, s, s == b)
	}
	if again, _ := Serial(b); again != s {
		t.Errorf("a second Serial call started another backend")
	}
	x := func() *tensors.Tensor { return tensors.FromValue([][]float32{{1, 2}, {3, 4}}) } // one per backend
	square := func(x *graph.Node) *graph.Node { return graph.MatMul(x, x) }
	want := graph.MustExecOnce(b, square, x())
	got := graph.MustExecOnce(s, square, x())
	if !reflect.DeepEqual(got.Value(), want.Value()) {
		t.Errorf("serial backend: %v, default: %v", got.Value(), want.Value())
	}
}
