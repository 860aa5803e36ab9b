package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/benchdata"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
)

// Tolerance is the largest normwise relative error (see [RelErr]) two formulations may differ
// by at float32 and still count as equal.
const Tolerance = benchdata.Tolerance

// Options are the bench's flags.
type Options struct {
	Root         string        // repository root: docs/, notebooks/, out/bench/ are under it
	Kernel       string        // the kernel binary running the bench: --cells executes the notebooks with its run subcommand
	Out          string        // -o: folder for results.json
	Quick        bool          // --quick: Quick size, 30s budget
	Size         Size          // --size b,t,d,h
	Reps         int           // --reps: timed runs per program; 0 = automatic (budget)
	Warmup       int           // --warmup: untimed runs after the first call; -1 = automatic
	Modes        []Mode        // --mode forward|backward|both|matmul
	Impls        []string      // --impls: formulations (default all)
	Backends     []string      // --backends: GoMLX backend configs; empty = every one that starts
	Python       string        // --python: interpreter with torch; "off" = no PyTorch side
	BLAS         []string      // --blas: PyTorch CPU builds to run: reference, openblas
	CurrentTorch string        // --current-torch: auto (the container's PyTorch beside the host's) or off
	RefImpls     []string      // --ref-impls: formulations PyTorch (reference BLAS) runs (default all)
	BwdImpls     []string      // --bwd-impls: formulations timed forward+backward (default all)
	Device       string        // --device: PyTorch's device, cpu or cuda
	Seed         int64         // --seed
	Budget       time.Duration // --budget: target wall time of the timed rounds when Reps is 0
	Matmul       []int         // --matmul-sizes: n of the [n, n] products (matmul mode)
	NoSIMD       bool          // --nosimd: matmul mode also times a GoMLX built without GOEXPERIMENT=simd
	Cells        bool          // --cells: notebook cell latency instead of attention
	WriteDocs    bool          // --write-docs: update docs/benchmarks.md and docs/benchmarks.json
	Label        string        // --label: the report's label (its section and JSON entry); "" = by the run's kind
	Render       bool          // --render-docs: only rewrite docs/benchmarks.md from docs/benchmarks.json
	Args         []string      // the command line, for the report
}

// Main is `go run ./kernel bench` run in the repository root root by the kernel binary kernel
// (os.Executable): it parses args, runs the bench and writes its results. It returns the exit
// code: 0 ok, 1 a check or a run failed, 2 bad flags.
func Main(root, kernel string, args []string, stdout, stderr io.Writer) int {
	o, err := ParseFlags(root, args, stderr)
	o.Kernel = kernel
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 2
		}
		return 0
	}
	if o.Render {
		labels, err := RenderDocs(o.Root)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "rendered docs/benchmarks.md from docs/benchmarks.json: %s\n", strings.Join(labels, ", "))
		return 0
	}
	var rep *benchdata.Report
	switch {
	case o.Cells:
		rep, err = RunCells(o, stderr)
	case slices.Contains(o.Modes, Matmul):
		rep, err = RunMatmul(o, stderr)
	default:
		rep, err = Run(o, stderr)
	}
	if rep != nil {
		wo := o
		if err != nil && o.WriteDocs { // a failed run never replaces the published numbers
			wo.WriteDocs = false
			fmt.Fprintf(stderr, "bench: docs/benchmarks.md and docs/benchmarks.json left as they were: the run failed\n")
		}
		if werr := writeOutputs(wo, rep, stdout); werr != nil {
			fmt.Fprintf(stderr, "bench: %v\n", werr)
			return 1
		}
		fmt.Fprint(stdout, rep.Text())
		if rep.Cells != nil {
			fmt.Fprint(stdout, CellsText(rep.Cells))
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if line := Summary(rep); line != "" {
		fmt.Fprintln(stdout, line)
	}
	return 0
}

// ParseFlags parses the bench's command line.
func ParseFlags(root string, args []string, stderr io.Writer) (Options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := Options{Root: root, Args: args}
	var size, modes, impls, backends, blas, refImpls, bwdImpls, sizes string
	fs.StringVar(&o.Out, "o", "", "folder for results.json (default out/bench under the repository)")
	fs.BoolVar(&o.Quick, "quick", false, fmt.Sprintf("small size (%s) and a 30s budget: about a minute", benchdata.Quick))
	fs.StringVar(&size, "size", "", fmt.Sprintf("b,t,d,h: batch, tokens, width, heads (default %d,%d,%d,%d)", benchdata.Full.Batch, benchdata.Full.Tokens, benchdata.Full.Dim, benchdata.Full.Heads))
	fs.IntVar(&o.Reps, "reps", 0, "timed runs of each program; 0: as many as its share of -budget allows, 2 to 10")
	fs.IntVar(&o.Warmup, "warmup", -1, "untimed runs of each program after its first call; -1: 1 if its first call took under a second, else 0")
	fs.StringVar(&modes, "mode", "both", "forward, backward (forward+backward), both, or matmul (one [n, n] float32 product)")
	fs.StringVar(&impls, "impls", "", "comma-separated formulations (default all: "+strings.Join(ImplNames(), ",")+")")
	fs.StringVar(&backends, "backends", "", "comma-separated GoMLX backends, e.g. go,xla:cpu,xla:cuda (default: every one that starts here)")
	fs.StringVar(&o.Python, "python", DefaultPython, `Python with torch for the side-by-side runs; "off" to skip PyTorch`)
	fs.StringVar(&blas, "blas", "reference,openblas", "PyTorch CPU builds: reference (LD_LIBRARY_PATH="+ReferenceBLASDir+") and/or openblas (LD_LIBRARY_PATH="+OpenBLASDir+")")
	fs.StringVar(&o.CurrentTorch, "current-torch", "auto", "auto: also run the current PyTorch (Debian trixie's, "+TorchImageScript+") in a Docker container, on the same -blas builds, building its image once when missing; off: only the host's")
	fs.StringVar(&refImpls, "ref-impls", "", "formulations PyTorch on the reference BLAS runs (default: all; it is slow at full size)")
	fs.StringVar(&bwdImpls, "bwd-impls", "", "formulations timed forward+backward (default: all of -impls)")
	fs.StringVar(&o.Device, "device", "cpu", "PyTorch device: cpu or cuda")
	fs.Int64Var(&o.Seed, "seed", 123, "torch.manual_seed of the input and the weights")
	fs.DurationVar(&o.Budget, "budget", 8*time.Minute, "with -reps 0: target time of the warm-up and timed runs (--quick: 30s)")
	fs.StringVar(&sizes, "matmul-sizes", "1024,2048", "matmul mode: comma-separated n")
	fs.BoolVar(&o.NoSIMD, "nosimd", true, "matmul mode: also time GoMLX built without GOEXPERIMENT=simd (go run in a child process)")
	fs.BoolVar(&o.Cells, "cells", false, "measure notebook cell latency instead: this kernel binary's run subcommand on notebooks/*.ipynb")
	fs.BoolVar(&o.WriteDocs, "write-docs", false, "also update docs/benchmarks.md (between its markers) and docs/benchmarks.json")
	fs.StringVar(&o.Label, "label", "", "the run's label: its section of docs/benchmarks.md and entry of docs/benchmarks.json (default by the run's kind: quick, full, matmul, cells or custom)")
	fs.BoolVar(&o.Render, "render-docs", false, "measure nothing: rewrite docs/benchmarks.md's sections from docs/benchmarks.json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./kernel bench [--quick] [--size b,t,d,h] [--mode forward|backward|both|matmul] [--reps N] [-o DIR] [--write-docs] [--cells]")
		fmt.Fprintln(stderr, "\nTimes causal multi-head attention written eight ways with pkg/attention on every GoMLX backend that")
		fmt.Fprintln(stderr, "starts, side by side with the same formulations in PyTorch (reference BLAS and OpenBLAS): this")
		fmt.Fprintln(stderr, "machine's and the current one (Debian trixie's 2.6, with F.scaled_dot_product_attention) in a Docker")
		fmt.Fprintln(stderr, "container, after checking that they all agree; or one float32 matrix product (--mode matmul); or")
		fmt.Fprintln(stderr, "notebook cell latency.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Size = benchdata.Full
	if o.Quick {
		o.Size = benchdata.Quick
	}
	if size != "" {
		s, err := parseInts(size, 4)
		if err != nil {
			return o, fmt.Errorf("-size %q: %v; want b,t,d,h, e.g. 8,1024,768,12", size, err)
		}
		o.Size = Size{Batch: s[0], Tokens: s[1], Dim: s[2], Heads: s[3]}
	}
	if err := o.Size.Check(); err != nil {
		return o, err
	}
	switch modes {
	case "forward":
		o.Modes = []Mode{Forward}
	case "backward":
		o.Modes = []Mode{Backward}
	case "both":
		o.Modes = []Mode{Forward, Backward}
	case "matmul":
		o.Modes = []Mode{Matmul}
	default:
		return o, fmt.Errorf("-mode %q: want forward, backward, both or matmul", modes)
	}
	var err error
	if o.Impls, err = implList(impls, "-impls"); err != nil {
		return o, err
	}
	if o.RefImpls, err = implList(refImpls, "-ref-impls"); err != nil {
		return o, err
	}
	if o.BwdImpls, err = implList(bwdImpls, "-bwd-impls"); err != nil {
		return o, err
	}
	for _, b := range splitList(blas) {
		if b != "reference" && b != "openblas" {
			return o, fmt.Errorf("-blas %q: want reference and/or openblas", b)
		}
		o.BLAS = append(o.BLAS, b)
	}
	if o.Matmul, err = parseInts(sizes, -1); err != nil {
		return o, fmt.Errorf("-matmul-sizes %q: %v", sizes, err)
	}
	o.Backends = splitList(backends)
	if o.Label != "" && !regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`).MatchString(o.Label) {
		return o, fmt.Errorf("-label %q: want lower-case letters, digits and dashes, e.g. current-pytorch", o.Label)
	}
	if o.CurrentTorch != "auto" && o.CurrentTorch != "off" {
		return o, fmt.Errorf("-current-torch %q: want auto or off", o.CurrentTorch)
	}
	if o.Device != "cpu" && o.Device != "cuda" {
		return o, fmt.Errorf("-device %q: want cpu or cuda", o.Device)
	}
	if o.Reps < 0 {
		return o, fmt.Errorf("-reps must be >= 0")
	}
	budgetSet := false
	fs.Visit(func(f *flag.Flag) { budgetSet = budgetSet || f.Name == "budget" })
	if o.Quick && !budgetSet {
		o.Budget = 30 * time.Second
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, "out", "bench")
	}
	return o, nil
}

// implList parses a comma-separated list of formulations; empty is all of them.
func implList(s, flagName string) ([]string, error) {
	if s == "" {
		return ImplNames(), nil
	}
	var out []string
	for _, n := range splitList(s) {
		if _, ok := ImplByName(n); !ok {
			return nil, fmt.Errorf("%s: unknown formulation %q (have %s)", flagName, n, strings.Join(ImplNames(), ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// parseInts parses comma-separated positive integers, want of them (-1: any number, at least one).
func parseInts(s string, want int) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, n)
	}
	if (want > 0 && len(out) != want) || len(out) == 0 {
		return nil, fmt.Errorf("want %d numbers, got %d", want, len(out))
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// goSeries is one GoMLX backend the bench runs.
type goSeries struct {
	series  benchdata.Series
	backend compute.Backend
}

// startBackends starts the GoMLX backends asked for, or the pure-Go backend plus every PJRT
// plugin pkg/backend finds; one that does not start is a note.
func startBackends(asked []string, rep *benchdata.Report) []goSeries {
	cfgs := asked
	if len(cfgs) == 0 {
		cfgs = []string{backend.GoConfig()}
		for _, p := range backend.Choose().Plugins {
			cfgs = append(cfgs, "xla:"+p)
		}
		if v := os.Getenv(backend.EnvVar); v != "" && !slices.Contains(cfgs, v) && !strings.HasPrefix(v, "go") {
			cfgs = append(cfgs, v)
		}
	}
	var out []goSeries
	for _, cfg := range cfgs {
		b, err := backend.New(cfg)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("backend %s skipped: it does not start here (%s)", cfg, oneLine(err.Error(), 160)))
			continue
		}
		s := benchdata.Series{Framework: "go", Backend: backendLabel(cfg)}
		s.Name = "GoMLX " + s.Backend
		if s.Backend == "go" {
			simd, detail := backend.SIMD()
			s.Name = "GoMLX go (" + simdLabel(simd) + ")"
			how := "started as " + strconv.Quote(cfg)
			if cfg == backend.GoConfig() {
				how += ", as notebooks start it"
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("GoMLX go (pure-Go backend, %s); matrix products: %s", how, detail))
		}
		out = append(out, goSeries{series: s, backend: b})
	}
	return out
}

// backendLabel is the short name tables use: "go" for the pure-Go backend in any configuration,
// "xla:cuda" for a CUDA plugin given by path.
func backendLabel(cfg string) string {
	switch {
	case cfg == "go" || strings.HasPrefix(cfg, "go:"):
		return "go"
	case strings.HasPrefix(cfg, "xla:") && strings.Contains(cfg, "cuda"):
		return "xla:cuda"
	}
	return cfg
}

// settle is the pause before every timed run. After each call OpenBLAS's threads spin for 2^28
// cycles (OpenBLAS's THREAD_TIMEOUT; 60–100 ms here) before they sleep, and Go's idle threads spin
// briefly too: a program timed right after another shared the two cores with them (GoMLX's
// 2048³ product measured 234 GFLOP/s right after PyTorch+OpenBLAS's, 344 without PyTorch running).
const settle = 200 * time.Millisecond

func simdLabel(simd bool) string {
	if simd {
		return "SIMD"
	}
	return "no SIMD"
}

// job is one program to time: a formulation in a mode on one series.
type job struct {
	impl   string
	mode   Mode
	key    string     // series key
	prog   *Program   // GoMLX; nil for PyTorch
	torch  *torchProc // PyTorch; nil for GoMLX
	res    *benchdata.Result
	failed bool
	cost   time.Duration // the first call: what one run costs at most
	reps   int
	warmup int
}

// run times one call of the job.
func (j *job) run(x *tensors.Tensor) (time.Duration, error) {
	if j.prog != nil {
		return j.prog.Time(x)
	}
	sec, err := j.torch.run(j.res.Name, j.mode)
	return time.Duration(sec * float64(time.Second)), err
}

// Run runs the multi-head attention bench described by o, printing progress to progress, and
// returns the report (also when some run failed: the error then says which).
func Run(o Options, progress io.Writer) (*benchdata.Report, error) {
	start := time.Now()
	rep := newReport(o)
	var failures []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failures = append(failures, msg)
		rep.Notes = append(rep.Notes, "FAILED: "+msg)
	}
	fmt.Fprintf(progress, "bench: %s, %s, GOMAXPROCS=%d\n", o.Size, modesString(o.Modes), runtime.GOMAXPROCS(0))

	gos := startBackends(o.Backends, rep)
	if len(gos) == 0 {
		return rep, errors.New("no GoMLX backend starts here")
	}
	for _, g := range gos {
		rep.Series = append(rep.Series, g.series)
	}
	x, w := NewInputs(o.Seed, o.Size)

	torches := startTorches(o, rep, progress)
	defer func() {
		for _, t := range torches {
			t.close()
		}
	}()
	for _, t := range torches {
		for _, name := range t.setup.sortedChecks() {
			e := t.setup.Check[name]
			rep.Checks = append(rep.Checks, check(fmt.Sprintf("%s: %s vs chapter, output", t.series.Name, name), e))
			if !(e <= Tolerance) {
				fail("%s: %s differs from its chapter: relative error %.3g > %g", t.series.Name, name, e, Tolerance)
				t.setup.Impls = slices.DeleteFunc(t.setup.Impls, func(n string) bool { return n == name })
			}
		}
	}

	// Every program, in the interleaved order: each formulation on every series, mode by mode.
	var jobs []*job
	add := func(j *job, name string) *job {
		j.res = &benchdata.Result{Impl: j.impl, Name: name, Mode: j.mode}
		j.res.Framework, j.res.Backend, _ = strings.Cut(j.key, "/")
		rep.Results = append(rep.Results, j.res)
		jobs = append(jobs, j)
		return j
	}
	for _, name := range o.Impls {
		im, _ := ImplByName(name)
		for _, mode := range o.Modes {
			if mode == Backward && !slices.Contains(o.BwdImpls, name) {
				continue
			}
			for _, g := range gos {
				j := add(&job{impl: name, mode: mode, key: g.series.Key()}, name)
				p, err := NewProgram(g.backend, im, mode, w, o.Size)
				if err != nil {
					j.failed, j.res.Error = true, oneLine(err.Error(), 300)
					fail("%s %s on %s: %v", name, mode.Label(), g.series.Name, err)
				}
				j.prog = p
			}
			for _, t := range torches {
				tname := TorchName(name)
				if strings.HasSuffix(t.series.Backend, "reference-blas") && !slices.Contains(o.RefImpls, name) {
					continue
				}
				if !slices.Contains(t.setup.Impls, tname) {
					if j := add(&job{impl: name, mode: mode, key: t.series.Key()}, tname); true {
						j.failed, j.res.Error = true, "unsupported: not in PyTorch "+t.setup.Torch
					}
					continue
				}
				add(&job{impl: name, mode: mode, key: t.series.Key(), torch: t}, tname)
			}
		}
	}
	defer func() {
		for _, j := range jobs {
			j.prog.Close()
		}
	}()

	// First calls: compile and check every Go program; PyTorch's setup ran every forward once.
	bar := newProgressBar(progress, len(jobs))
	first := map[*job][]float32{} // the forward output, or the gradient with respect to the input
	for _, j := range jobs {
		bar.step()
		if j.failed {
			continue
		}
		bar.show(fmt.Sprintf("first call: %s %s %s", j.key, j.impl, j.mode.Label()))
		if j.torch != nil {
			sec, ok := j.torch.setup.Seconds[j.res.Name]
			if !ok || j.mode != Forward {
				var err error
				if sec, err = j.torch.run(j.res.Name, j.mode); err != nil {
					j.failed, j.res.Error = true, oneLine(err.Error(), 300)
					fail("%s %s on %s: %v", j.impl, j.mode.Label(), j.key, err)
				}
			}
			j.res.FirstCallMS = sec * 1e3
			j.cost = time.Duration(sec * float64(time.Second))
			continue
		}
		t0 := time.Now()
		outs, err := j.prog.Run(x)
		j.cost = time.Since(t0)
		j.res.FirstCallMS = float64(j.cost) / 1e6
		if err == nil {
			first[j] = tensors.MustCopyFlatData[float32](outs[0])
		} else {
			j.failed, j.res.Error = true, oneLine(err.Error(), 300)
			fail("%s %s on %s: %v", j.impl, j.mode.Label(), j.key, err)
		}
		release(outs)
	}
	bar.finish()
	for _, j := range checkAgreement(rep, jobs, first) {
		fail("%s %s on %s: %s", j.impl, j.mode.Label(), j.key, j.res.Error)
	}
	for _, t := range torches {
		checkTorchReference(rep, jobs, first, t)
	}
	first = nil

	// Warm-up and timed rounds, interleaved: each round runs every live program once, in job
	// order (Go A, PyTorch A, Go B, …), so drifts of the shared machine hit all alike. Each
	// program gets -reps timed runs, or as many as its share of -budget allows (2 to 10), and
	// one warm-up run when its first call took under a second.
	live := 0
	for _, j := range jobs {
		if !j.failed {
			live++
		}
	}
	share := o.Budget / time.Duration(max(1, live))
	rounds, total := 0, 0
	for _, j := range jobs {
		if j.failed {
			continue
		}
		cost := max(j.cost, time.Millisecond)
		j.reps = o.Reps
		if j.reps == 0 {
			j.reps = max(2, min(10, int(share/cost)))
		}
		j.warmup = o.Warmup
		if j.warmup < 0 {
			j.warmup = 0
			if cost < time.Second {
				j.warmup = 1
			}
		}
		rounds = max(rounds, j.warmup+j.reps)
		total += j.warmup + j.reps
	}
	fmt.Fprintf(progress, "bench: %d runs in %d rounds\n", total, rounds)
	bar = newProgressBar(progress, total)
	for round := range rounds {
		for _, j := range jobs {
			if j.failed || round >= j.warmup+j.reps {
				continue
			}
			bar.step()
			timed := round >= j.warmup
			bar.show(fmt.Sprintf("round %d: %s %s %s", round+1, j.key, j.impl, j.mode.Label()))
			time.Sleep(settle)
			d, err := j.run(x)
			if err != nil {
				j.failed, j.res.Error = true, oneLine(err.Error(), 300)
				fail("%s %s on %s: %v", j.impl, j.mode.Label(), j.key, err)
			} else if timed {
				j.res.RunsMS = append(j.res.RunsMS, float64(d)/1e6)
			}
		}
	}
	bar.finish()
	finish(rep, start)
	if len(failures) > 0 {
		return rep, fmt.Errorf("%d failure(s): %s", len(failures), strings.Join(failures, "; "))
	}
	return rep, nil
}

// checkAgreement compares every GoMLX program's first output with the chapter's on the same
// series and mode (the first formulation's when the chapter is not run): the forward output, or
// the gradient with respect to the input (the weights' gradients are in each formulation's own
// layout). It marks and returns the programs that differ by more than [Tolerance].
func checkAgreement(rep *benchdata.Report, jobs []*job, first map[*job][]float32) (failed []*job) {
	refs := map[string]*job{}
	for _, j := range jobs {
		if _, ok := first[j]; !ok {
			continue
		}
		key := j.key + "/" + string(j.mode)
		if ref, ok := refs[key]; !ok || (j.impl == "chapter" && ref.impl != "chapter") {
			refs[key] = j
		}
	}
	for _, j := range jobs {
		got, ok := first[j]
		ref := refs[j.key+"/"+string(j.mode)]
		if !ok || ref == j {
			continue
		}
		e := RelErr(got, first[ref])
		what := "output"
		if j.mode == Backward {
			what = "input gradient"
		}
		rep.Checks = append(rep.Checks, check(fmt.Sprintf("%s: %s vs %s, %s", rep.SeriesName(j.key), j.impl, ref.impl, what), e))
		if !(e <= Tolerance) {
			j.failed = true
			j.res.Error = fmt.Sprintf("%s differs from %s's: relative error %.3g > %g", what, ref.impl, e, Tolerance)
			failed = append(failed, j)
		}
	}
	return failed
}

// checkTorchReference compares each GoMLX chapter's forward output with PyTorch's on the first
// and last 64 values and the sum of absolute values: the same seed gives the same input and
// weights.
func checkTorchReference(rep *benchdata.Report, jobs []*job, first map[*job][]float32, t *torchProc) {
	ref := t.setup.Reference
	for _, j := range jobs {
		got, ok := first[j]
		if !ok || j.impl != "chapter" || j.mode != Forward || len(got) < 64 || len(ref.Head) != 64 || len(ref.Tail) != 64 {
			continue
		}
		n := len(got)
		a := append(slices.Clone(got[:64]), got[n-64:]...)
		e := RelErr(a, append(slices.Clone(ref.Head), ref.Tail...))
		var abs float64
		for _, v := range got {
			abs += float64(max(v, -v))
		}
		d := abs - ref.AbsSum
		e = max(e, max(d, -d)/ref.AbsSum)
		rep.Checks = append(rep.Checks, check(fmt.Sprintf("%s chapter vs %s chapter: output (128 values and Σ|out|)", rep.SeriesName(j.key), t.series.Name), e))
	}
}

func check(what string, relErr float64) benchdata.Check {
	return benchdata.Check{What: what, RelErr: relErr, OK: relErr <= Tolerance}
}

// Summary is the last line of an attention run: every formulation's forward time on the first
// GoMLX series relative to its fastest, the chapter's relative to each PyTorch build, and the
// fastest's relative to F.scaled_dot_product_attention in each PyTorch that has it.
func Summary(r *benchdata.Report) string {
	if r == nil || len(r.Series) == 0 || r.Series[0].Framework != "go" || r.Cells != nil {
		return ""
	}
	main := r.Series[0].Key()
	mode := r.Modes()
	if len(mode) == 0 || mode[0] == Matmul {
		return ""
	}
	fast := r.Fastest(main, Forward)
	if fast == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("fastest=%s", fast.Impl)}
	for _, impl := range r.Rows() {
		if g := r.Find(impl, main, Forward); g != nil && g != fast {
			parts = append(parts, fmt.Sprintf("%s %s", impl, benchdata.FormatRatio(g.MedianMS/fast.MedianMS)))
		}
	}
	for _, s := range r.Series[1:] {
		if s.Framework == "pytorch" {
			if x := r.Ratio("chapter", main, s.Key(), Forward); x > 0 {
				parts = append(parts, fmt.Sprintf("chapter ÷ %s %s", s.Name, benchdata.FormatRatio(x)))
			}
			if sdpa := r.SDPA(s.Key(), Forward); sdpa != nil {
				parts = append(parts, fmt.Sprintf("%s ÷ %s's SDPA %s", fast.Impl, s.Name, benchdata.FormatRatio(fast.MedianMS/sdpa.MedianMS)))
			}
		}
	}
	return fmt.Sprintf("%s forward: %s", r.Label, strings.Join(parts, "; "))
}

func modesString(ms []Mode) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Label())
	}
	return strings.Join(s, " and ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n-1] + "…"
	}
	return s
}

// progressBar is a one-line progress display: "\r[#####.....] 12/48 label".
type progressBar struct {
	w        io.Writer
	total, n int
	start    time.Time
}

func newProgressBar(w io.Writer, total int) *progressBar {
	return &progressBar{w: w, total: max(total, 1), start: time.Now()}
}

func (p *progressBar) show(label string) {
	const width = 24
	k := min(p.n, p.total) * width / p.total
	line := fmt.Sprintf("\r[%s%s] %d/%d %5.0fs  %s", strings.Repeat("#", k), strings.Repeat(".", width-k),
		p.n, p.total, time.Since(p.start).Seconds(), label)
	fmt.Fprintf(p.w, "%-100s", line)
}

func (p *progressBar) step() { p.n++ }

func (p *progressBar) finish() {
	p.show("done")
	fmt.Fprintln(p.w)
}
