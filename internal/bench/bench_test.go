package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/attnbook/attnbook/pkg/benchdata"
)

// BenchmarkForward times the forward pass of every formulation at the quick size on the pure-Go
// backend (`go test -run X -bench Forward ./internal/bench/`); compilation happens before the timer.
func BenchmarkForward(b *testing.B) { benchmarkMode(b, Forward) }

// BenchmarkForwardBackward times forward + backward (the gradient of the outputs' sum with
// respect to the input and every weight) at the quick size.
func BenchmarkForwardBackward(b *testing.B) { benchmarkMode(b, Backward) }

func benchmarkMode(b *testing.B, mode Mode) {
	be := testBackend(b)
	s := benchdata.Quick
	x, w := NewInputs(123, s)
	for _, im := range Impls() {
		b.Run(im.Name, func(b *testing.B) {
			p, err := NewProgram(be, im, mode, w, s)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Time(x); err != nil { // compiles
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := p.Time(x); err != nil {
					b.Fatal(err)
				}
			}
			flops := s.FLOPs()
			if mode == Backward {
				flops *= 3
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestMainTiny runs the whole command at a tiny size without PyTorch: flags, checks, rounds,
// results.json, tables and the summary line, which comes last.
func TestMainTiny(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(dir, "", []string{"--size", "1,32,16,2", "--reps", "2", "--python", "off", "--backends", "go", "-o", dir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "custom forward: fastest=") || strings.Count(last, ";") != len(Impls())-1 {
		t.Errorf("last line %q: want the summary over %d formulations", last, len(Impls()))
	}
	if !strings.Contains(stderr.String(), "\r[") {
		t.Errorf("no progress bar on stderr: %q", stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep benchdata.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	timed := 0
	for _, r := range rep.Results {
		if len(r.RunsMS) == 2 && r.MedianMS > 0 && r.FirstCallMS > 0 && r.GFLOPS > 0 {
			timed++
		}
	}
	if want := 2 * len(Impls()); len(rep.Results) != want || timed != want {
		t.Errorf("%d results, %d timed twice: want %d and %d\n%s", len(rep.Results), timed, want, want, data)
	}
	// Every formulation but the chapter is compared with the chapter, in both modes.
	if want := 2 * (len(Impls()) - 1); len(rep.Checks) != want {
		t.Errorf("%d checks, want %d", len(rep.Checks), want)
	}
	for _, c := range rep.Checks {
		if !c.OK || c.RelErr > 1e-5 {
			t.Errorf("check: %+v", c)
		}
	}
	if rep.Label != "custom" || rep.Size != (Size{Batch: 1, Tokens: 32, Dim: 16, Heads: 2}) || len(rep.Series) != 1 || rep.Series[0].Key() != "go/go" {
		t.Errorf("report %q %s series %+v", rep.Label, rep.Size, rep.Series)
	}
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	o, err := ParseFlags("/r", []string{"--quick"}, &stderr)
	if err != nil || o.Size != benchdata.Quick || o.Budget != 30*time.Second || len(o.Modes) != 2 ||
		len(o.Impls) != len(Impls()) || o.Out != filepath.Join("/r", "out", "bench") || strings.Join(o.BLAS, ",") != "reference,openblas" || o.CurrentTorch != "auto" {
		t.Errorf("--quick: %+v, %v", o, err)
	}
	if o, err := ParseFlags("/r", []string{"--current-torch", "off", "--label", "current-pytorch"}, &stderr); err != nil || o.CurrentTorch != "off" || newReport(o).Label != "current-pytorch" {
		t.Errorf("--current-torch off --label current-pytorch: %q %q, %v", o.CurrentTorch, o.Label, err)
	}
	o, err = ParseFlags("/r", []string{"--size", "4,256,128,8", "--mode", "forward", "--impls", "chapter,fast", "--ref-impls", "chapter", "--bwd-impls", "fast", "--blas", "openblas"}, &stderr)
	if err != nil || o.Size != (Size{Batch: 4, Tokens: 256, Dim: 128, Heads: 8}) || len(o.Modes) != 1 || strings.Join(o.Impls, ",") != "chapter,fast" ||
		strings.Join(o.RefImpls, ",") != "chapter" || strings.Join(o.BwdImpls, ",") != "fast" || strings.Join(o.BLAS, ",") != "openblas" {
		t.Errorf("flags: %+v, %v", o, err)
	}
	o, err = ParseFlags("/r", []string{"--mode", "matmul", "--matmul-sizes", "256,512"}, &stderr)
	if err != nil || o.Modes[0] != Matmul || len(o.Matmul) != 2 || o.Matmul[1] != 512 {
		t.Errorf("matmul: %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--size", "1,2,3"}, {"--size", "1,8,10,4"}, {"--mode", "sideways"},
		{"--impls", "nope"}, {"--ref-impls", "nope"}, {"--bwd-impls", "nope"}, {"--blas", "mkl"}, {"--current-torch", "maybe"}, {"--label", "Full Size"}, {"--label", "../x"}, {"--device", "tpu"}, {"--matmul-sizes", "0"}, {"extra"}} {
		if _, err := ParseFlags("/r", bad, &stderr); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestCheckAgreement: a program whose output differs from the chapter's by more than the
// tolerance is taken out of the timing, and one within it is kept.
func TestCheckAgreement(t *testing.T) {
	rep := &benchdata.Report{Series: []benchdata.Series{{Framework: "go", Backend: "go", Name: "GoMLX go"}}}
	mk := func(impl string) *job {
		return &job{impl: impl, mode: Forward, key: "go/go", res: &benchdata.Result{Impl: impl}}
	}
	wrapper, chapter, fast := mk("wrapper"), mk("chapter"), mk("fast")
	first := map[*job][]float32{
		wrapper: {1, 2, 3.00001},
		chapter: {1, 2, 3},
		fast:    {1, 2, 3.1},
	}
	failed := checkAgreement(rep, []*job{wrapper, chapter, fast}, first)
	if len(failed) != 1 || failed[0] != fast || !fast.failed || wrapper.failed || chapter.failed {
		t.Errorf("failed = %v; want only fast", failed)
	}
	if len(rep.Checks) != 2 || rep.Checks[0].What != "GoMLX go: wrapper vs chapter, output" || !rep.Checks[0].OK || rep.Checks[1].OK {
		t.Errorf("checks %+v", rep.Checks)
	}
	if !strings.Contains(fast.res.Error, "differs from chapter") {
		t.Errorf("error %q", fast.res.Error)
	}
}

// TestTorchSide runs the PyTorch script at a small size on both BLAS builds: its formulations
// agree with each other, its chapter output is the Go loop reference's (same seed, same input
// and weights), and the OpenBLAS process really loaded OpenBLAS.
func TestTorchSide(t *testing.T) {
	if testing.Short() || !hasTorch(DefaultPython) {
		t.Skipf("%s with torch not available (or -short)", DefaultPython)
	}
	s := Size{Batch: 2, Tokens: 160, Dim: 16, Heads: 2}
	o := Options{Python: DefaultPython, BLAS: []string{"reference", "openblas"}, Device: "cpu", Size: s, Seed: 123, Modes: []Mode{Forward}}
	rep := &benchdata.Report{}
	procs := startTorches(o, rep, &bytes.Buffer{})
	defer func() {
		for _, p := range procs {
			p.close()
		}
	}()
	if len(procs) != 2 {
		t.Fatalf("started %d PyTorch processes, want 2; notes %q", len(procs), rep.Notes)
	}
	x, w := NewInputs(123, s)
	want := reference(x, w, s)
	for _, p := range procs {
		for _, name := range []string{"wrapper", "chapter", "combined_qkv", "einsum", "torch_mha", "fast"} {
			if e, ok := p.setup.Check[name]; !ok || !(e <= Tolerance) {
				t.Errorf("%s: %s vs chapter: %v (present %v)", p.series.Name, name, e, ok)
			}
		}
		got := append(append([]float32{}, p.setup.Reference.Head...), p.setup.Reference.Tail...)
		if e := RelErr(got, append(append([]float32{}, want[:64]...), want[len(want)-64:]...)); !(e <= Tolerance) {
			t.Errorf("%s chapter vs Go reference: relative error %g", p.series.Name, e)
		}
		if p.series.Backend == "openblas" && strings.Contains(p.setup.BLASConfig, "(core Prescott") && slices.Contains(readCPUInfo().flags, "avx2") {
			t.Errorf("%s runs OpenBLAS's generic kernels on a CPU with AVX2: %s", p.series.Name, p.setup.BLASConfig)
		}
		wantDir := map[string]string{"reference-blas": ReferenceBLASDir, "openblas": OpenBLASDir}[p.series.Backend]
		if !slices.ContainsFunc(p.setup.BLAS, func(l string) bool { return strings.HasPrefix(l, wantDir+"/libblas.so.3") }) {
			t.Errorf("%s loaded %q, want %s/libblas.so.3", p.series.Name, p.setup.BLAS, wantDir)
		}
		for _, mode := range []Mode{Forward, Backward} {
			if sec, err := p.run("fast", mode); err != nil || sec <= 0 {
				t.Errorf("%s: run fast %s: %g, %v", p.series.Name, mode, sec, err)
			}
		}
		if sec, err := p.matmul(64); err != nil || sec <= 0 {
			t.Errorf("%s: matmul: %g, %v", p.series.Name, sec, err)
		}
		if _, err := p.run("nope", Forward); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("unknown formulation: err %v", err)
		}
	}
}

// TestOpenBLASCoreFor runs openblas_core.py's rule: OpenBLAS's generic Prescott kernels give way to
// the AVX-512 or AVX2 ones the CPU's flags call for; any core OpenBLAS knows is kept.
func TestOpenBLASCoreFor(t *testing.T) {
	if _, err := os.Stat(DefaultPython); err != nil {
		t.Skipf("%s: %v", DefaultPython, err)
	}
	script := openblasCore + `
avx512 = {"sse3", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"}
for core, flags, want in [("Prescott", avx512, "SkylakeX"), ("Prescott", {"sse3", "avx2", "fma"}, "Haswell"),
                          ("Prescott", {"sse3"}, ""), ("Haswell", avx512, ""), ("Zen", avx512, ""),
                          ("SkylakeX", avx512, ""), ("Cooperlake", avx512, "")]:
    got = core_for(core, flags)
    if got != want:
        sys.exit("core_for(%r, %s) = %r, want %r" % (core, sorted(flags), got, want))
`
	if out, err := exec.Command(DefaultPython, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestOpenBLASCoretypeDropped: an OPENBLAS_CORETYPE from the environment does not choose the
// baseline's kernels (a Zen 5 guest's environment set Haswell, whose 400 steps of the recipe took
// 1.3x the time of OpenBLAS's own pick there): strongest_openblas_core re-runs the process without
// it, names it in the notes, and keeps the one it sets itself across its own re-run.
func TestOpenBLASCoretypeDropped(t *testing.T) {
	if _, err := os.Stat(DefaultPython); err != nil {
		t.Skipf("%s: %v", DefaultPython, err)
	}
	script := openblasCore + `
strongest_openblas_core()
print(os.environ.get("OPENBLAS_CORETYPE", "") == os.environ.get(OURS, ""), coretype_note())
`
	cmd := exec.Command(DefaultPython, "-c", script)
	cmd.Env = append(os.Environ(), "OPENBLAS_CORETYPE=Prescott", "ATTNBOOK_OPENBLAS_CORETYPE=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := strings.TrimSpace(string(out))
	if !strings.HasPrefix(got, "True ") || !strings.HasSuffix(got, "the environment's OPENBLAS_CORETYPE=Prescott dropped") {
		t.Errorf("after strongest_openblas_core with OPENBLAS_CORETYPE=Prescott: %q, want it dropped, named, and any core set its own", got)
	}
}

// TestMatmulTiny runs --mode matmul at small sizes on the pure-Go backend: one result per size,
// timed, with GFLOP/s, and a peak computed from /proc/cpuinfo where there is one.
func TestMatmulTiny(t *testing.T) {
	dir := t.TempDir()
	o, err := ParseFlags(dir, []string{"--mode", "matmul", "--matmul-sizes", "64,128", "--reps", "2", "--python", "off", "--backends", "go", "--nosimd=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunMatmul(o, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Label != "matmul" {
		t.Fatalf("%d results, label %q", len(rep.Results), rep.Label)
	}
	for i, n := range []string{"64", "128"} {
		r := rep.Results[i]
		if r.Impl != n || len(r.RunsMS) != 2 || r.GFLOPS <= 0 || r.Key() != "go/go" {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if _, err := os.Stat("/proc/cpuinfo"); err == nil && (rep.Peak == nil || rep.Peak.GFLOPS <= 0 || !strings.Contains(rep.Peak.Formula, "cores ×")) {
		t.Errorf("peak %+v", rep.Peak)
	}
}
