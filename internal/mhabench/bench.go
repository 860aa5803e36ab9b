package mhabench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
)

// Tolerance is the largest normwise relative error (see [RelErr]) two formulations may differ
// by at float32 and still count as equal.
const Tolerance = 1e-4

// GoBackendConfig is how the bench starts the pure-Go backend: GoMLX v0.26.0's simplego runs
// independent ops in parallel by default, and on a machine with few cores that deadlocks when
// more large matrix products are ready at once than its worker pool has slots (the wrapper's
// 3·H head projections on 2 cores: every slot is held by a product waiting for a slot for its
// own blocks). ops_sequential runs one op at a time, each op still parallel inside.
const GoBackendConfig = "go:ops_sequential"

// unsupportedOp matches GoMLX's error for an op a backend lacks: `op "Pad" not implemented in SimpleGo`.
var unsupportedOp = regexp.MustCompile(`op "([A-Za-z]+)" not implemented in ([A-Za-z]+)`)

// Options are the bench's flags.
type Options struct {
	Out       string        // -o: folder for results.json, results.csv, chart.svg
	Quick     bool          // --quick: Quick size, 30s budget
	Size      Size          // --size b,t,d,h
	Reps      int           // --reps: timed runs per program; 0 = automatic (budget)
	Warmup    int           // --warmup: untimed runs after the first call; -1 = automatic
	Modes     []Mode        // --mode forward|backward|both
	Impls     []string      // --impls: formulations (default all)
	Backends  []string      // --backends: GoMLX backend configs; empty = every one that starts
	Python    string        // --python: interpreter with torch; "off" = no PyTorch side
	Device    string        // --device: PyTorch's device, cpu or cuda
	Seed      int64         // --seed
	Budget    time.Duration // --budget: target wall time of the timed rounds when Reps is 0
	Cells     bool          // --cells: notebook cell latency instead of attention
	WriteDocs bool          // --write-docs: update docs/benchmarks.md and docs/benchmarks.json
	Render    bool          // --render-docs: only rewrite docs/benchmarks.md from docs/benchmarks.json
	Root      string        // repository root (found from the working directory)
	Args      []string      // the command line, for the report
}

// Main is `go run ./kernel bench`: it parses args, runs the bench and writes its results. It
// returns the exit code: 0 ok, 1 a check or a run failed, 2 bad flags.
func Main(args []string, stdout, stderr io.Writer) int {
	o, err := ParseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "bench: %v\n", err)
		}
		return 2
	}
	if o.Render {
		labels, err := RenderDocs(o.Root)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "rendered %s from docs/benchmarks.json: %s\n", filepath.Join(o.Root, "docs", "benchmarks.md"), strings.Join(labels, ", "))
		return 0
	}
	if o.Cells {
		return mainCells(o, stdout, stderr)
	}
	rep, err := Run(o, stderr)
	if rep != nil {
		if werr := writeOutputs(o, rep, stdout); werr != nil {
			fmt.Fprintf(stderr, "bench: %v\n", werr)
			return 1
		}
		PrintTables(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if line := rep.Summary(); line != "" {
		fmt.Fprintln(stdout, line)
	}
	return 0
}

// ParseFlags parses the bench's command line.
func ParseFlags(args []string, stderr io.Writer) (Options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := Options{Args: args}
	var size, modes, impls, backendsFlag string
	fs.StringVar(&o.Out, "o", "", "folder for results.json, results.csv and chart.svg (default out/bench under the repository)")
	fs.BoolVar(&o.Quick, "quick", false, fmt.Sprintf("small sizes (%s) and a 30s budget: under a minute", Quick))
	fs.StringVar(&size, "size", "", fmt.Sprintf("b,t,d,h: batch, tokens, width, heads (default %d,%d,%d,%d)", Full.Batch, Full.Tokens, Full.Dim, Full.Heads))
	fs.IntVar(&o.Reps, "reps", 0, "timed runs of each program; 0: as many as its share of -budget allows, 3 to 10")
	fs.IntVar(&o.Warmup, "warmup", -1, "untimed runs of each program after its first call; -1: 1 if its first call took under a second, else 0")
	fs.StringVar(&modes, "mode", "both", "forward, backward (forward+backward) or both")
	fs.StringVar(&impls, "impls", "", "comma-separated formulations (default all: "+strings.Join(implNames(), ",")+")")
	fs.StringVar(&backendsFlag, "backends", "", "comma-separated GoMLX backends, e.g. go,xla:cpu,xla:cuda (default: every one that starts here)")
	fs.StringVar(&o.Python, "python", DefaultPython, `Python with torch for the side-by-side runs; "off" to skip PyTorch`)
	fs.StringVar(&o.Device, "device", "cpu", "PyTorch device: cpu or cuda")
	fs.Int64Var(&o.Seed, "seed", 123, "torch.manual_seed of the input and the weights")
	fs.DurationVar(&o.Budget, "budget", 8*time.Minute, "with -reps 0: target time of the warm-up and timed runs (--quick: 30s)")
	fs.BoolVar(&o.Cells, "cells", false, "measure notebook cell latency instead: go run ./kernel run on notebooks/*.ipynb")
	fs.BoolVar(&o.WriteDocs, "write-docs", false, "also update docs/benchmarks.md (between its markers) and docs/benchmarks.json")
	fs.BoolVar(&o.Render, "render-docs", false, "measure nothing: rewrite docs/benchmarks.md's sections from docs/benchmarks.json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./kernel bench [--quick] [--size b,t,d,h] [--reps N] [--mode forward|backward|both] [-o DIR] [--write-docs] [--cells]")
		fmt.Fprintln(stderr, "\nTimes causal multi-head attention written six ways in GoMLX, on every backend that starts,")
		fmt.Fprintln(stderr, "side by side with the same formulations in PyTorch, after checking they all agree.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Size = Full
	if o.Quick {
		o.Size = Quick
	}
	if size != "" {
		s, err := parseSize(size)
		if err != nil {
			return o, err
		}
		o.Size = s
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
	default:
		return o, fmt.Errorf("-mode %q: want forward, backward or both", modes)
	}
	if impls == "" {
		o.Impls = implNames()
	} else {
		for _, n := range splitList(impls) {
			if _, ok := ImplByName(n); !ok {
				return o, fmt.Errorf("-impls: unknown formulation %q (have %s)", n, strings.Join(implNames(), ", "))
			}
			o.Impls = append(o.Impls, n)
		}
	}
	o.Backends = splitList(backendsFlag)
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
	o.Root = findRoot()
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, "out", "bench")
	}
	return o, nil
}

func parseSize(s string) (Size, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return Size{}, fmt.Errorf("-size %q: want b,t,d,h, e.g. 8,1024,768,12", s)
	}
	var v [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return Size{}, fmt.Errorf("-size %q: %q is not a number", s, p)
		}
		v[i] = n
	}
	return Size{Batch: v[0], Tokens: v[1], Dim: v[2], Heads: v[3]}, nil
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

func implNames() []string {
	var names []string
	for _, im := range Impls() {
		names = append(names, im.Name)
	}
	return names
}

// findRoot is the nearest folder up from the working directory whose go.mod is attnbook's, or
// the working directory.
func findRoot() string {
	wd, _ := os.Getwd()
	for dir := wd; ; dir = filepath.Dir(dir) {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(data), "module github.com/attnbook/attnbook\n") {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

// series is one column of the tables: a GoMLX backend, or PyTorch.
type series struct {
	framework, backend string          // "go", "go" | "go", "xla:cpu" | "pytorch", "cpu"
	gomlx              compute.Backend // nil for PyTorch
}

// job is one program to time: a formulation in a mode on one series.
type job struct {
	impl   string // the Go formulation (row)
	mode   Mode
	s      *series
	prog   *Program // GoMLX; nil for PyTorch
	res    *Result
	failed bool
	cost   time.Duration // the first call: what one run costs at most
	reps   int           // timed runs
	warmup int           // untimed runs after the first call
}

// Run runs the bench described by o, printing progress to progress, and returns the report
// (also when some run failed: the error then says which).
func Run(o Options, progress io.Writer) (*Report, error) {
	start := time.Now()
	rep := newReport(o)
	var failures []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		failures = append(failures, msg)
		rep.Notes = append(rep.Notes, "FAILED: "+msg)
	}
	// drop takes j out of the rounds: an op the backend lacks is a note, anything else a failure.
	drop := func(j *job, err error) {
		j.failed = true
		if m := unsupportedOp.FindStringSubmatch(err.Error()); m != nil {
			j.res.Error = "unsupported: " + m[1] + " not implemented in " + m[2]
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s %s on %s not run: op %s is not implemented in GoMLX %s's %s",
				j.impl, j.mode.Label(), j.s.backend, m[1], rep.Versions.GoMLX, m[2]))
			return
		}
		j.res.Error = oneLine(err.Error(), 300)
		fail("%s %s on %s: %v", j.res.Name, j.mode.Label(), j.s.backend, err)
	}
	fmt.Fprintf(progress, "bench: %s, %s, GOMAXPROCS=%d\n", o.Size, modesString(o.Modes), runtime.GOMAXPROCS(0))

	// Backends: every one that starts, or the ones asked for.
	var all []*series
	for _, cfg := range backendConfigs(o.Backends) {
		b, err := newBackend(cfg)
		name := backendLabel(cfg)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("backend %s skipped: it does not start here (%s)", name, oneLine(err.Error(), 160)))
			continue
		}
		all = append(all, &series{framework: "go", backend: name, gomlx: b})
		rep.Backends = append(rep.Backends, name)
		if cfg == GoBackendConfig {
			rep.Notes = append(rep.Notes, "backend go is GoMLX's simplego started as "+GoBackendConfig+
				": its default parallel op scheduling deadlocks on the wrapper with 2 cores (GoMLX v0.26.0)")
		}
	}
	if len(all) == 0 {
		return rep, errors.New("no GoMLX backend starts here")
	}

	x, w := NewInputs(o.Seed, o.Size)
	rep.Notes = append(rep.Notes, fmt.Sprintf("gomlx_layers: GoMLX v0.26.0 scales its logits by 1/hd, not 1/√hd (measured: %s); its W_query is loaded ×√hd to compute the same function",
		describeLayersScale(all[0].gomlx)))

	// PyTorch side.
	var torch *torchProc
	var torchSeries *series
	if o.Python != "off" {
		switch {
		case !hasTorch(o.Python):
			rep.Notes = append(rep.Notes, fmt.Sprintf("PyTorch side skipped: %s cannot import torch", o.Python))
		default:
			fmt.Fprintf(progress, "bench: starting PyTorch (%s, %d threads, %s)\n", o.Python, runtime.GOMAXPROCS(0), o.Device)
			var err error
			if torch, err = startTorch(o.Python); err == nil {
				var setup *torchSetup
				if setup, err = torch.setup(o.Size, o.Seed, runtime.GOMAXPROCS(0), o.Device); err == nil {
					torchSeries = &series{framework: "pytorch", backend: o.Device}
					rep.setTorch(setup)
					rep.torchRef = setup
					names := slices.Sorted(maps.Keys(setup.Check))
					for _, name := range names {
						e := setup.Check[name]
						rep.addCheck("pytorch "+name+" vs pytorch chapter: output", e)
						if !(e <= Tolerance) {
							fail("pytorch %s differs from pytorch chapter: relative error %.3g > %g", name, e, Tolerance)
							rep.torchImpls = slices.DeleteFunc(rep.torchImpls, func(n string) bool { return n == name })
						}
					}
				}
			}
			if err != nil {
				rep.Notes = append(rep.Notes, "PyTorch side skipped: "+oneLine(err.Error(), 300))
				if torch != nil {
					torch.close()
					torch = nil
				}
			}
		}
	}
	if torch != nil {
		defer torch.close()
	}

	// Compile and check every Go program (first call), and warm PyTorch up, in the interleaved order.
	var jobs []*job
	for _, name := range o.Impls {
		im, _ := ImplByName(name)
		for _, mode := range o.Modes {
			for _, s := range all {
				j := &job{impl: name, mode: mode, s: s, res: rep.addResult(name, name, "go", s.backend, mode)}
				jobs = append(jobs, j)
				if need := BackwardBytes(o.Size); mode == Backward && s.backend == "go" && memTotal > 0 && need > memTotal/2 {
					j.failed = true
					j.res.Error = fmt.Sprintf("unsupported: needs ≈ %.0f GB", float64(need)/1e9)
					if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, "fwd+bwd on go not run") }) {
						rep.Notes = append(rep.Notes, fmt.Sprintf("fwd+bwd on go not run: GoMLX %s differentiates DotGeneral by a broadcast multiply and a sum, which here materializes ≈ %.0f GB (more than half of this machine's %.0f GB)",
							rep.Versions.GoMLX, float64(need)/1e9, float64(memTotal)/1e9))
					}
					continue
				}
				p, err := NewProgram(s.gomlx, im, mode, w, o.Size)
				if err != nil {
					drop(j, err)
				}
				j.prog = p
			}
			if torchSeries != nil && rep.torchHas(TorchName(name)) {
				jobs = append(jobs, &job{impl: name, mode: mode, s: torchSeries,
					res: rep.addResult(name, TorchName(name), "pytorch", torchSeries.backend, mode)})
			}
		}
	}
	if torchSeries != nil && rep.torchHas("sdpa") {
		for _, mode := range o.Modes {
			jobs = append(jobs, &job{impl: "sdpa", mode: mode, s: torchSeries,
				res: rep.addResult("sdpa", "sdpa", "pytorch", torchSeries.backend, mode)})
		}
	}
	defer func() {
		for _, j := range jobs {
			if j.prog != nil {
				j.prog.Close()
			}
		}
	}()

	bar := newProgressBar(progress, len(jobs))
	first := map[*job][]float32{} // the forward output, or the gradient with respect to the input
	for _, j := range jobs {
		if j.failed {
			bar.step()
			continue
		}
		bar.show(fmt.Sprintf("first call: %s %s %s", j.s.backend, j.impl, j.mode.Label()))
		if j.prog == nil { // PyTorch: its setup already ran every formulation forward once
			sec, ok := rep.torchRef.Seconds[j.res.Name]
			if !ok || j.mode != Forward {
				var err error
				if sec, err = torch.run(j.res.Name, j.mode); err != nil {
					drop(j, err)
				}
			}
			j.res.FirstCallMS = sec * 1e3
			j.cost = time.Duration(sec * float64(time.Second))
			bar.step()
			continue
		}
		t0 := time.Now()
		outs, err := j.prog.Run(x)
		j.res.FirstCallMS = msSince(t0)
		j.cost = time.Since(t0)
		if err == nil {
			first[j] = tensors.MustCopyFlatData[float32](outs[0])
		} else {
			drop(j, err)
		}
		release(outs)
		bar.step()
	}
	bar.finish()
	for _, j := range rep.checkAgreement(jobs, first) {
		fail("%s %s on %s: %s", j.impl, j.mode.Label(), j.s.backend, j.res.Error)
	}
	if torch != nil && rep.torchRef != nil {
		rep.checkTorchReference(jobs, first)
	}
	first = nil

	// Warm-up and timed rounds, interleaved: Go impl A, PyTorch impl A, Go impl B, … Each program
	// gets its own number of timed runs: -reps, or as many as its share of -budget allows (3 to
	// 10; 2 when even 3 do not fit), so slow fwd+bwd programs do not starve quick ones; and one
	// warm-up run when its first call took under a second (a slower one was warm-up enough).
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
		rep.Reps, rep.Warmup = max(rep.Reps, j.reps), max(rep.Warmup, j.warmup)
	}
	if o.Reps == 0 {
		fmt.Fprintf(progress, "bench: %d runs in %d rounds to fit the budget of %s\n", total, rounds, o.Budget)
	}
	bar = newProgressBar(progress, total)
	for round := range rounds {
		for _, j := range jobs {
			if j.failed || round >= j.warmup+j.reps {
				continue
			}
			timed := round >= j.warmup
			what := "warm-up"
			if timed {
				what = fmt.Sprintf("run %d/%d", round-j.warmup+1, j.reps)
			}
			bar.show(fmt.Sprintf("%s: %s %s %s", what, j.s.backend, j.impl, j.mode.Label()))
			var d time.Duration
			var err error
			if j.prog != nil {
				d, err = j.prog.Time(x)
			} else {
				var sec float64
				sec, err = torch.run(j.res.Name, j.mode)
				d = time.Duration(sec * float64(time.Second))
			}
			if err != nil {
				drop(j, err)
			} else if timed {
				j.res.RunsMS = append(j.res.RunsMS, float64(d)/1e6)
			}
			bar.step()
		}
	}
	bar.finish()
	rep.finish(time.Since(start))
	if len(failures) > 0 {
		return rep, fmt.Errorf("%d failure(s): %s", len(failures), strings.Join(failures, "; "))
	}
	return rep, nil
}

// checkAgreement compares every Go program's first output with the chapter's on the same
// backend and mode (the first formulation's when the chapter is not run): the forward output,
// or the gradient with respect to the input (the weights' gradients are in each formulation's
// own layout). It marks and returns the programs that differ by more than [Tolerance].
func (r *Report) checkAgreement(jobs []*job, first map[*job][]float32) (failed []*job) {
	refs := map[string]*job{}
	for _, j := range jobs {
		if _, ok := first[j]; !ok {
			continue
		}
		key := j.s.backend + "/" + string(j.mode)
		if ref, ok := refs[key]; !ok || (j.impl == "chapter" && ref.impl != "chapter") {
			refs[key] = j
		}
	}
	for _, j := range jobs {
		got, ok := first[j]
		ref := refs[j.s.backend+"/"+string(j.mode)]
		if !ok || ref == j {
			continue
		}
		e := RelErr(got, first[ref])
		what := "output"
		if j.mode == Backward {
			what = "input gradient"
		}
		r.addCheck(fmt.Sprintf("go %s %s: %s vs %s", j.s.backend, what, j.impl, ref.impl), e)
		if !(e <= Tolerance) {
			j.failed = true
			j.res.Error = fmt.Sprintf("%s differs from %s's: relative error %.3g > %g", what, ref.impl, e, Tolerance)
			failed = append(failed, j)
		}
	}
	return failed
}

// checkTorchReference compares the Go chapter's forward output with PyTorch's on the first and
// last 64 values and the sum of absolute values: the same seed gives the same input and weights.
func (r *Report) checkTorchReference(jobs []*job, first map[*job][]float32) {
	ref := r.torchRef.Reference
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
			abs += math.Abs(float64(v))
		}
		e = max(e, math.Abs(abs-ref.AbsSum)/ref.AbsSum)
		r.addCheck(fmt.Sprintf("go %s chapter vs pytorch chapter: output (128 values and Σ|out|)", j.s.backend), e)
	}
}

// BackwardBytes estimates the largest tensor GoMLX v0.26.0's gradient of a DotGeneral
// materializes in the backward pass of s: its VJP multiplies the output's adjoint, broadcast,
// by the other operand and reduce-sums, so the gradient of the scores holds B·H·T·T·hd floats
// and that of a projection B·T·d·d.
func BackwardBytes(s Size) int64 {
	b, t, d, hd := int64(s.Batch), int64(s.Tokens), int64(s.Dim), int64(s.HeadDim())
	h := int64(s.Heads)
	return 4 * max(b*h*t*t*hd, b*t*d*d)
}

// backendConfigs is the GoMLX backends to try: the ones asked for, or the pure-Go backend plus
// every PJRT plugin found locally (as pkg/backend finds them).
func backendConfigs(asked []string) []string {
	if len(asked) > 0 {
		var out []string
		for _, a := range asked {
			if a == "go" {
				a = GoBackendConfig
			}
			out = append(out, a)
		}
		return out
	}
	cfgs := []string{GoBackendConfig}
	c := backend.Choose()
	for _, p := range c.Plugins {
		cfgs = append(cfgs, "xla:"+p)
	}
	if v := os.Getenv(backend.EnvVar); v != "" && !slices.Contains(cfgs, v) && v != "go" {
		cfgs = append(cfgs, v)
	}
	return cfgs
}

// backendLabel is the short name tables use: "go" for the pure-Go backend in any configuration,
// "xla:cuda" for JAX's CUDA plugin given by path.
func backendLabel(cfg string) string {
	switch {
	case cfg == "go" || strings.HasPrefix(cfg, "go:"):
		return "go"
	case strings.HasPrefix(cfg, "xla:") && strings.Contains(cfg, "cuda"):
		return "xla:cuda"
	}
	return cfg
}

// newBackend is backends.NewWithConfig with its panics turned into errors.
func newBackend(cfg string) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return compute.NewWithConfig(cfg)
}

func describeLayersScale(b compute.Backend) string {
	got, want, err := MeasureLayersLogitScale(b, 64)
	if err != nil {
		return "measurement failed: " + oneLine(err.Error(), 120)
	}
	return fmt.Sprintf("hd=64: logit scale %.6f = 1/%.2f, the chapter's 1/√64 = %.6f, factor %.3f", got, 1/got, want, want/got)
}

func modesString(ms []Mode) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Label())
	}
	return strings.Join(s, " and ")
}

func msSince(t time.Time) float64 { return float64(time.Since(t)) / 1e6 }

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max-1] + "…"
	}
	return s
}

// progressBar is a one-line progress display: "\r[#####.....] 12/48 label".
type progressBar struct {
	w        io.Writer
	total, n int
	label    string
	start    time.Time
}

func newProgressBar(w io.Writer, total int) *progressBar {
	return &progressBar{w: w, total: max(total, 1), start: time.Now()}
}

func (p *progressBar) show(label string) {
	p.label = label
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
