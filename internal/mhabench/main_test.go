package mhabench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMainTiny runs the whole command at a tiny size without PyTorch: flags, checks, rounds,
// files, tables and the summary line, which comes last.
func TestMainTiny(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main([]string{"--size", "1,32,16,2", "--reps", "2", "--python", "off", "-o", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	lines := strings.Split(out, "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "custom: fastest=") || strings.Count(last, ";") != len(Impls())-1 {
		t.Errorf("last line %q: want the summary over %d formulations", last, len(Impls()))
	}
	if !strings.Contains(stderr.String(), "] ") || !strings.Contains(stderr.String(), "\r[") {
		t.Errorf("no progress bar on stderr: %q", stderr.String())
	}
	var rep Report
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	// 6 formulations × 2 modes on the Go backend; combined_qkv's backward is skipped (no Pad).
	timed := 0
	for _, r := range rep.Results {
		if len(r.RunsMS) == 2 && r.MedianMS > 0 && r.FirstCallMS > 0 {
			timed++
		}
	}
	if len(rep.Results) != 12 || timed != 11 {
		t.Errorf("%d results, %d timed twice: want 12 and 11\n%s", len(rep.Results), timed, data)
	}
	if len(rep.Checks) < 9 {
		t.Errorf("%d checks, want every formulation compared in both modes", len(rep.Checks))
	}
	for _, c := range rep.Checks {
		if !c.OK {
			t.Errorf("check failed: %+v", c)
		}
	}
	for _, f := range []string{"results.csv", "chart.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	o, err := ParseFlags([]string{"--quick"}, &stderr)
	if err != nil || o.Size != Quick || o.Reps != 0 || o.Budget != 30*time.Second || len(o.Modes) != 2 || len(o.Impls) != len(Impls()) {
		t.Errorf("--quick: %+v, %v", o, err)
	}
	o, err = ParseFlags([]string{"--size", "4,256,128,8", "--mode", "forward", "--impls", "chapter,fast"}, &stderr)
	if err != nil || o.Size != (Size{4, 256, 128, 8}) || len(o.Modes) != 1 || strings.Join(o.Impls, ",") != "chapter,fast" {
		t.Errorf("flags: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--size", "1,2,3"}, {"--size", "1,8,10,4"}, {"--mode", "sideways"},
		{"--impls", "nope"}, {"--device", "tpu"}, {"extra"}} {
		if _, err := ParseFlags(bad, &stderr); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestTorchSide runs the PyTorch script at a small size: its formulations agree with each other
// and its chapter output is the Go loop reference's (same seed, same input and weights).
func TestTorchSide(t *testing.T) {
	if testing.Short() || !hasTorch(DefaultPython) {
		t.Skipf("%s with torch not available (or -short)", DefaultPython)
	}
	p, err := startTorch(DefaultPython)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	s := Size{Batch: 2, Tokens: 128, Dim: 16, Heads: 2}
	setup, err := p.setup(s, 123, 1, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wrapper", "chapter", "combined_qkv", "einsum", "torch_mha", "fast"} {
		e, ok := setup.Check[name]
		if !ok || !(e <= Tolerance) {
			t.Errorf("pytorch %s vs chapter: %v (present %v)", name, e, ok)
		}
	}
	x, w := NewInputs(123, s)
	want := toFloat32(reference(x, w, s))
	got := append(append([]float32{}, setup.Reference.Head...), setup.Reference.Tail...)
	if e := RelErr(got, append(append([]float32{}, want[:64]...), want[len(want)-64:]...)); !(e <= Tolerance) {
		t.Errorf("pytorch chapter vs Go reference: relative error %g", e)
	}
	for _, mode := range []Mode{Forward, Backward} {
		if sec, err := p.run("fast", mode); err != nil || sec <= 0 {
			t.Errorf("run fast %s: %g, %v", mode, sec, err)
		}
	}
	if _, err := p.run("nope", Forward); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown formulation: err %v", err)
	}
}
