package mhabench

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Report is everything one bench run measured: what is written as results.json, and, under its
// Label, into docs/benchmarks.json.
type Report struct {
	Schema   int        `json:"schema"`
	Label    string     `json:"label"` // "quick", "full", "custom" or "cells"
	Date     string     `json:"date"`
	Command  string     `json:"command"`
	Machine  Machine    `json:"machine"`
	Versions Versions   `json:"versions"`
	Size     Size       `json:"size"`
	GFLOP    float64    `json:"gflop"`   // of one forward pass (Size.FLOPs / 1e9)
	Reps     int        `json:"reps"`    // the most timed runs of a program (each result lists its runs)
	Warmup   int        `json:"warmup"`  // the most warm-up runs of a program
	Threads  int        `json:"threads"` // GOMAXPROCS, and torch.set_num_threads
	Backends []string   `json:"backends"`
	Device   string     `json:"torch_device,omitempty"`
	Notes    []string   `json:"notes"`
	Checks   []Check    `json:"checks"`
	Results  []*Result  `json:"results"`
	Cells    *CellStats `json:"cells,omitempty"`
	Seconds  float64    `json:"seconds"` // wall time of the whole run
	Load     [2]string  `json:"load"`    // 1-minute load average at the start and at the end (Linux)

	torchImpls []string
	torchRef   *torchSetup
}

// Machine is where the numbers come from.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"` // runtime.NumCPU
	GOMAXPROCS int    `json:"gomaxprocs"`
	MemoryGiB  int    `json:"memory_gib,omitempty"`
	OS         string `json:"os"`
}

// Versions are the software versions.
type Versions struct {
	Go      string `json:"go"`
	GoMLX   string `json:"gomlx"`
	PyTorch string `json:"pytorch,omitempty"`
	Python  string `json:"python,omitempty"`
	BLAS    string `json:"pytorch_blas,omitempty"`
}

// Check is one equality check: two computations that must agree within [Tolerance].
type Check struct {
	What   string  `json:"what"`
	RelErr float64 `json:"rel_err"`
	OK     bool    `json:"ok"`
}

// Result is the timing of one program: a formulation (Impl, the table's row) in a framework on
// a backend, in one mode.
type Result struct {
	Impl        string    `json:"impl"`      // row: the Go formulation's name, or "sdpa"
	Name        string    `json:"name"`      // the framework's name for it: gomlx_layers, torch_mha, …
	Framework   string    `json:"framework"` // "go" or "pytorch"
	Backend     string    `json:"backend"`   // "go", "xla:cpu", "xla:cuda"; PyTorch: "cpu", "cuda"
	Mode        Mode      `json:"mode"`
	MedianMS    float64   `json:"median_ms"`
	MinMS       float64   `json:"min_ms"`
	MaxMS       float64   `json:"max_ms"`
	RunsMS      []float64 `json:"runs_ms"`
	FirstCallMS float64   `json:"first_call_ms"` // Go: graph building + compilation + one run
	GFLOPS      float64   `json:"gflops"`        // forward-pass FLOPs (×3 for fwd+bwd) / median
	Error       string    `json:"error,omitempty"`
}

// Series is "go/go", "go/xla:cpu", "pytorch/cpu".
func (r *Result) Series() string { return r.Framework + "/" + r.Backend }

func newReport(o Options) *Report {
	label := "custom"
	switch {
	case o.Quick && o.Size == Quick:
		label = "quick"
	case o.Size == Full:
		label = "full"
	}
	return &Report{
		Schema:   1,
		Label:    label,
		Date:     time.Now().UTC().Format(time.RFC3339),
		Command:  strings.TrimSpace("go run ./kernel bench " + strings.Join(o.Args, " ")),
		Machine:  machineInfo(),
		Versions: Versions{Go: runtime.Version(), GoMLX: moduleVersion("github.com/gomlx/gomlx")},
		Size:     o.Size,
		GFLOP:    o.Size.FLOPs() / 1e9,
		Threads:  runtime.GOMAXPROCS(0),
		Device:   o.Device,
		Load:     [2]string{loadAvg(), ""},
	}
}

// loadAvg is the 1-minute load average from /proc/loadavg, or "".
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func (r *Report) setTorch(s *torchSetup) {
	r.Versions.PyTorch, r.Versions.Python = s.Torch, s.Python
	r.torchImpls = s.Impls
	for _, line := range strings.Split(s.Config, "\n") {
		if i := strings.Index(line, "BLAS_INFO="); i >= 0 {
			r.Versions.BLAS, _, _ = strings.Cut(line[i+len("BLAS_INFO="):], ",")
		}
	}
	r.Notes = append(r.Notes, s.Notes...)
	if s.Threads != r.Threads {
		r.Notes = append(r.Notes, fmt.Sprintf("PyTorch runs %d threads, Go %d", s.Threads, r.Threads))
	}
}

func (r *Report) torchHas(name string) bool { return slices.Contains(r.torchImpls, name) }

func (r *Report) addResult(impl, name, framework, backend string, mode Mode) *Result {
	res := &Result{Impl: impl, Name: name, Framework: framework, Backend: backend, Mode: mode}
	r.Results = append(r.Results, res)
	return res
}

func (r *Report) addCheck(what string, relErr float64) {
	r.Checks = append(r.Checks, Check{What: what, RelErr: relErr, OK: relErr <= Tolerance})
}

// finish computes the statistics of every result.
func (r *Report) finish(elapsed time.Duration) {
	r.Seconds = math.Round(elapsed.Seconds()*10) / 10
	r.Load[1] = loadAvg()
	for _, res := range r.Results {
		if len(res.RunsMS) == 0 {
			continue
		}
		res.MedianMS = median(res.RunsMS)
		res.MinMS, res.MaxMS = slices.Min(res.RunsMS), slices.Max(res.RunsMS)
		flops := r.Size.FLOPs()
		if res.Mode == Backward {
			flops *= 3
		}
		res.GFLOPS = round3(flops / (res.MedianMS / 1e3) / 1e9)
	}
}

// Find returns the result of impl on framework/backend in mode, or nil.
func (r *Report) Find(impl, framework, backend string, mode Mode) *Result {
	for _, res := range r.Results {
		if res.Impl == impl && res.Framework == framework && res.Backend == backend && res.Mode == mode && res.MedianMS > 0 {
			return res
		}
	}
	return nil
}

// rows are the formulations in the report, in Impls order, then PyTorch-only ones.
func (r *Report) rows() []string {
	var rows []string
	for _, res := range r.Results {
		if !slices.Contains(rows, res.Impl) {
			rows = append(rows, res.Impl)
		}
	}
	return rows
}

func (r *Report) modes() []Mode {
	var ms []Mode
	for _, res := range r.Results {
		if !slices.Contains(ms, res.Mode) {
			ms = append(ms, res.Mode)
		}
	}
	return ms
}

func (r *Report) series() []string {
	var ss []string
	for _, res := range r.Results {
		if !slices.Contains(ss, res.Series()) {
			ss = append(ss, res.Series())
		}
	}
	return ss
}

// fastestGo is the fastest Go formulation on backend in mode.
func (r *Report) fastestGo(backend string, mode Mode) *Result {
	var best *Result
	for _, res := range r.Results {
		if res.Framework == "go" && res.Backend == backend && res.Mode == mode && res.MedianMS > 0 &&
			(best == nil || res.MedianMS < best.MedianMS) {
			best = res
		}
	}
	return best
}

// GoOverTorch is the geometric mean over formulations of Go's median over PyTorch's, on the Go
// backend in mode, and how many formulations it covers.
func (r *Report) GoOverTorch(backend string, mode Mode) (ratio float64, n int) {
	logSum := 0.0
	for _, impl := range r.rows() {
		g, t := r.Find(impl, "go", backend, mode), r.Find(impl, "pytorch", r.Device, mode)
		if g == nil || t == nil {
			continue
		}
		logSum += math.Log(g.MedianMS / t.MedianMS)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return math.Exp(logSum / float64(n)), n
}

// Summary is the last line of a quick run: every formulation's forward time relative to the
// fastest on the first Go backend, and Go over PyTorch (geometric mean over formulations).
func (r *Report) Summary() string {
	if len(r.Backends) == 0 {
		return ""
	}
	b := r.Backends[0]
	fast := r.fastestGo(b, Forward)
	if fast == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("fastest=%s 1.00x", fast.Impl)}
	for _, impl := range r.rows() {
		if g := r.Find(impl, "go", b, Forward); g != nil && g != fast {
			parts = append(parts, fmt.Sprintf("%s %s", impl, ratio(g.MedianMS/fast.MedianMS)))
		}
	}
	if gt, n := r.GoOverTorch(b, Forward); n > 0 {
		parts = append(parts, fmt.Sprintf("go/pytorch=%s", ratio(gt)))
	}
	return fmt.Sprintf("%s: %s", r.Label, strings.Join(parts, "; "))
}

func ratio(x float64) string {
	switch {
	case x < 1.995:
		return fmt.Sprintf("%.2fx", x)
	case x < 9.95:
		return fmt.Sprintf("%.1fx", x)
	}
	return fmt.Sprintf("%.0fx", x)
}

// PrintTables writes the results as text tables, one per mode, and the checks.
func PrintTables(w io.Writer, r *Report) {
	lo, hi := r.runCounts()
	fmt.Fprintf(w, "\n%s — %s, %d threads, %s; median of %s runs (ms)\n", r.Label, r.Size, r.Threads, r.Machine.CPU, countRange(lo, hi))
	for _, t := range r.tables() {
		fmt.Fprintf(w, "\n%s\n", t.title)
		widths := make([]int, len(t.header))
		for i, h := range t.header {
			widths[i] = len([]rune(h))
		}
		for _, row := range t.rows {
			for i, c := range row {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
		line := func(cells []string) {
			for i, c := range cells {
				pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
				if i == 0 {
					fmt.Fprintf(w, "  %s%s", c, pad)
				} else {
					fmt.Fprintf(w, "  %s%s", pad, c)
				}
			}
			fmt.Fprintln(w)
		}
		line(t.header)
		for _, row := range t.rows {
			line(row)
		}
	}
	bad := 0
	worst := 0.0
	for _, c := range r.Checks {
		if !c.OK {
			bad++
			fmt.Fprintf(w, "CHECK FAILED: %s: relative error %.3g > %g\n", c.What, c.RelErr, Tolerance)
		}
		if !math.IsNaN(c.RelErr) {
			worst = max(worst, c.RelErr)
		}
	}
	fmt.Fprintf(w, "\nchecks: %d of %d agree within %g (largest relative error %.2g)\n", len(r.Checks)-bad, len(r.Checks), Tolerance, worst)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

type table struct {
	title  string
	header []string
	rows   [][]string
}

// tables are the result tables, one per mode: a row per formulation; per series the median in
// ms; per Go backend the ratio to the fastest Go formulation and, with PyTorch, Go/PyTorch.
func (r *Report) tables() []table {
	var out []table
	series := r.series()
	for _, mode := range r.modes() {
		t := table{title: fmt.Sprintf("%s (%s)", mode.Label(), r.Size), header: []string{"formulation"}}
		for _, s := range series {
			t.header = append(t.header, s+" ms (min)")
		}
		hasTorch := slices.Contains(series, "pytorch/"+r.Device)
		for _, b := range r.Backends {
			t.header = append(t.header, "vs fastest ("+b+")")
			if hasTorch {
				t.header = append(t.header, b+"/pytorch")
			}
		}
		for _, impl := range r.rows() {
			row := []string{implLabel(impl)}
			for _, s := range series {
				fw, be, _ := strings.Cut(s, "/")
				row = append(row, msCell(r.Find(impl, fw, be, mode), r.findAny(impl, fw, be, mode)))
			}
			for _, b := range r.Backends {
				g, fast := r.Find(impl, "go", b, mode), r.fastestGo(b, mode)
				row = append(row, ratioCell(g, fast))
				if hasTorch {
					row = append(row, ratioCell(g, r.Find(impl, "pytorch", r.Device, mode)))
				}
			}
			t.rows = append(t.rows, row)
		}
		out = append(out, t)
	}
	return out
}

func (r *Report) findAny(impl, framework, backend string, mode Mode) *Result {
	for _, res := range r.Results {
		if res.Impl == impl && res.Framework == framework && res.Backend == backend && res.Mode == mode {
			return res
		}
	}
	return nil
}

// implLabel names a row with both frameworks' names where they differ.
func implLabel(impl string) string {
	switch impl {
	case "gomlx_layers":
		return "gomlx_layers / nn.MultiheadAttention"
	case "sdpa":
		return "sdpa (PyTorch only)"
	}
	return impl
}

func msCell(res, any *Result) string {
	switch {
	case res != nil && len(res.RunsMS) > 1:
		return fmtMS(res.MedianMS) + " (" + fmtMS(res.MinMS) + ")"
	case res != nil:
		return fmtMS(res.MedianMS)
	case any != nil && strings.HasPrefix(any.Error, "unsupported"):
		return "n/a"
	case any != nil && any.Error != "":
		return "failed"
	}
	return "—"
}

func ratioCell(a, b *Result) string {
	if a == nil || b == nil {
		return "—"
	}
	return ratio(a.MedianMS / b.MedianMS)
}

func fmtMS(ms float64) string {
	switch {
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	}
	return strconv.FormatFloat(ms, 'f', 2, 64)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// quantile is the q-quantile of xs by linear interpolation between order statistics.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// --- files -------------------------------------------------------------------------------------

// writeOutputs writes results.json, results.csv and chart.svg into o.Out and, with
// o.WriteDocs, updates the docs.
func writeOutputs(o Options, r *Report, stdout io.Writer) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{"results.json": append(data, '\n'), "results.csv": r.CSV()}
	if r.Cells == nil {
		files["chart.svg"] = []byte(r.SVG())
	}
	var names []string
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(o.Out, name), content, 0o644); err != nil {
			return err
		}
		names = append(names, filepath.Join(o.Out, name))
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "wrote %s\n", strings.Join(names, ", "))
	if o.WriteDocs {
		md, js, err := WriteDocs(o.Root, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "updated %s and %s (section %q)\n", md, js, r.Label)
	}
	return nil
}

// CSV is one line per result: the medians and every run.
func (r *Report) CSV() []byte {
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"label", "impl", "name", "framework", "backend", "mode", "batch", "tokens", "dim", "heads",
		"threads", "median_ms", "min_ms", "max_ms", "first_call_ms", "gflops", "runs_ms", "error"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	for _, res := range r.Results {
		var runs []string
		for _, x := range res.RunsMS {
			runs = append(runs, f(x))
		}
		_ = w.Write([]string{r.Label, res.Impl, res.Name, res.Framework, res.Backend, string(res.Mode),
			strconv.Itoa(r.Size.Batch), strconv.Itoa(r.Size.Tokens), strconv.Itoa(r.Size.Dim), strconv.Itoa(r.Size.Heads),
			strconv.Itoa(r.Threads), f(res.MedianMS), f(res.MinMS), f(res.MaxMS), f(res.FirstCallMS), f(res.GFLOPS),
			strings.Join(runs, " "), res.Error})
	}
	w.Flush()
	return []byte(b.String())
}

// machineInfo reads the CPU model and memory from /proc (Linux), else leaves them empty.
func machineInfo() Machine {
	m := Machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if memTotal > 0 {
		m.MemoryGiB = int(math.Round(float64(memTotal) / (1 << 30)))
	}
	if m.CPU == "" {
		m.CPU = runtime.GOARCH
	}
	return m
}

// moduleVersion is the version of module path this binary was built with.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// memTotal is the machine's memory in bytes (Linux /proc/meminfo), or 0 if unknown.
var memTotal = func() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	var kb int64
	if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err != nil {
		return 0
	}
	return kb << 10
}()
