// Package benchdata holds the results of `go run ./kernel bench` as docs/benchmarks.json stores
// them: the report types the bench (internal/bench) writes and notebook 09 reads, and the tables
// both show (as text in the bench, as HTML in the notebook). It measures nothing and imports
// nothing heavy, so a notebook cell links it fast.
//
// A [File] keeps the latest [Report] of each kind of run under its label: "quick" and "full"
// (multi-head attention at [Quick] and [Full] size), "matmul" (one float32 matrix product) and
// "cells" (notebook cell latency).
package benchdata

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Schema is the version of the JSON layout written by this package.
const Schema = 2

// Tolerance is the largest normwise relative error (max|a-b| / max|b|) two formulations may
// differ by at float32 and still count as equal.
const Tolerance = 1e-4

// Size is one multi-head attention workload: Batch sequences of Tokens tokens, model width Dim
// (d_in = d_out), Heads heads of Dim/Heads each.
type Size struct {
	Batch  int `json:"batch"`
	Tokens int `json:"tokens"`
	Dim    int `json:"dim"`
	Heads  int `json:"heads"`
}

// Full is the bonus material's size: GPT-2 small's attention on 8 sequences of 1024 tokens.
var Full = Size{Batch: 8, Tokens: 1024, Dim: 768, Heads: 12}

// Quick is the size of `bench --quick` and of the Go benchmarks: seconds, not minutes.
var Quick = Size{Batch: 2, Tokens: 128, Dim: 256, Heads: 4}

// HeadDim is Dim/Heads, the width hd of one head.
func (s Size) HeadDim() int { return s.Dim / s.Heads }

// String is "b=8 T=1024 d=768 h=12".
func (s Size) String() string {
	return fmt.Sprintf("b=%d T=%d d=%d h=%d", s.Batch, s.Tokens, s.Dim, s.Heads)
}

// Check returns an error unless every field is positive and Heads divides Dim.
func (s Size) Check() error {
	if s.Batch <= 0 || s.Tokens <= 0 || s.Dim <= 0 || s.Heads <= 0 {
		return fmt.Errorf("size %s: every dimension must be positive", s)
	}
	if s.Dim%s.Heads != 0 {
		return fmt.Errorf("size %s: d=%d is not divisible by h=%d", s, s.Dim, s.Heads)
	}
	return nil
}

// FLOPs is the floating-point operations of one forward pass, a multiply-add counted as 2 and
// only the matrix products: 4 projections of 2·B·T·d² and the scores and context products of
// 2·B·T²·d each (the full T×T, as every formulation but fast computes).
func (s Size) FLOPs() float64 {
	b, t, d := float64(s.Batch), float64(s.Tokens), float64(s.Dim)
	return 4*2*b*t*d*d + 2*2*b*t*t*d
}

// Mode is what a timed run computes.
type Mode string

const (
	// Forward is the attention output alone (its sum read back to wait for it).
	Forward Mode = "forward"
	// Backward is forward + backward: the gradient of the sum of the outputs with respect to
	// the input and every weight.
	Backward Mode = "backward"
	// Matmul is one `[n, n]` × `[n, n]` float32 matrix product; the result's Impl is n.
	Matmul Mode = "matmul"
)

// Label is how tables name the mode: "forward", "fwd+bwd" or "matmul".
func (m Mode) Label() string {
	if m == Backward {
		return "fwd+bwd"
	}
	return string(m)
}

// Report is everything one bench run measured.
type Report struct {
	Schema   int        `json:"schema"`
	Label    string     `json:"label"` // "quick", "full", "matmul", "cells" or "custom"
	Date     string     `json:"date"`
	Command  string     `json:"command"`
	Machine  Machine    `json:"machine"`
	Versions Versions   `json:"versions"`
	Size     Size       `json:"size,omitzero"`
	Threads  int        `json:"threads"` // GOMAXPROCS, torch.set_num_threads and OPENBLAS_NUM_THREADS
	Series   []Series   `json:"series"`  // the columns, in order
	Notes    []string   `json:"notes"`
	Checks   []Check    `json:"checks"`
	Results  []*Result  `json:"results"`
	Peak     *Peak      `json:"peak,omitempty"`
	Cells    *CellStats `json:"cells,omitempty"`
	Seconds  float64    `json:"seconds"` // wall time of the whole run
	Load     [2]string  `json:"load"`    // 1-minute load average at the start and at the end (Linux)
}

// Series is one column of the tables: a GoMLX backend, or a PyTorch build.
type Series struct {
	Framework string `json:"framework"` // "go" (GoMLX) or "pytorch"
	// Backend is, for GoMLX, "go", "go-nosimd", "xla:cpu", "xla:cuda"; for the host's PyTorch,
	// "reference-blas", "openblas", "cuda"; for the current PyTorch in its container,
	// "container-reference-blas" and "container-openblas".
	Backend string `json:"backend"`
	Name    string `json:"name"`              // for people: "GoMLX go (SIMD)", "PyTorch (OpenBLAS)", "PyTorch 2.6 (OpenBLAS)"
	Version string `json:"version,omitempty"` // PyTorch: torch.__version__ of the process that ran it
	Image   string `json:"image,omitempty"`   // the Docker image it ran in ("" on the host)
	// Skipped says why the column has no times ("" when it ran): only columns that the run
	// keeps when they cannot run, those of the current PyTorch's container (no Docker, say).
	Skipped string `json:"skipped,omitempty"`
}

// Key is "framework/backend", the series' identity.
func (s Series) Key() string { return s.Framework + "/" + s.Backend }

// Machine is where the numbers come from.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"` // runtime.NumCPU
	GOMAXPROCS int    `json:"gomaxprocs"`
	MemoryGiB  int    `json:"memory_gib,omitempty"`
	MHz        int    `json:"mhz,omitempty"` // /proc/cpuinfo "cpu MHz"
	Flags      string `json:"simd_flags,omitempty"`
	OS         string `json:"os"`
}

// Versions are the software versions.
type Versions struct {
	Go           string `json:"go"`
	GoExperiment string `json:"goexperiment,omitempty"` // of the bench binary: "simd" when the SIMD kernels are in
	GOAMD64      string `json:"goamd64,omitempty"`      // of the bench binary (amd64): v1 … v4
	GoMLX        string `json:"gomlx"`
	PyTorch      string `json:"pytorch,omitempty"` // the host's
	Python       string `json:"python,omitempty"`
	// PyTorchContainer is the current PyTorch's version, its Python's and the image it ran in:
	// "2.6.0 (Python 3.13.5; attnbook/torch:2.6.0_dfsg-7-…)".
	PyTorchContainer string `json:"pytorch_container,omitempty"`
}

// Peak is the machine's float32 peak as the bench finds it: the larger of the nominal Cores × GHz
// × FLOPPerCycle and the measured FMA throughput of all cores.
type Peak struct {
	Cores          int     `json:"cores"`
	GHz            float64 `json:"ghz"`
	FLOPPerCycle   int     `json:"flop_per_cycle"` // per core
	MeasuredGFLOPS float64 `json:"measured_gflops,omitempty"`
	GFLOPS         float64 `json:"gflops"`  // the peak percentages are of
	Formula        string  `json:"formula"` // how it was found, for people
}

// Check is one equality check: two computations that must agree within [Tolerance].
type Check struct {
	What   string  `json:"what"`
	RelErr float64 `json:"rel_err"`
	OK     bool    `json:"ok"`
}

// Result is the timing of one program: a formulation (Impl, the table's row) on one series, in
// one mode.
type Result struct {
	Impl        string    `json:"impl"`      // row: the Go formulation's name, "sdpa", or the matmul's n
	Name        string    `json:"name"`      // the framework's name for it: gomlx_layers, torch_mha, …
	Framework   string    `json:"framework"` // Series.Framework
	Backend     string    `json:"backend"`   // Series.Backend
	Mode        Mode      `json:"mode"`
	MedianMS    float64   `json:"median_ms"`
	MinMS       float64   `json:"min_ms"`
	MaxMS       float64   `json:"max_ms"`
	RunsMS      []float64 `json:"runs_ms"`
	FirstCallMS float64   `json:"first_call_ms"` // GoMLX: graph building + compilation + one run
	GFLOPS      float64   `json:"gflops"`        // FLOPs (forward ×3 for fwd+bwd) / median
	Error       string    `json:"error,omitempty"`
}

// Key is the result's series key, "framework/backend".
func (r *Result) Key() string { return r.Framework + "/" + r.Backend }

// OK reports whether the result was timed.
func (r *Result) OK() bool { return r != nil && r.MedianMS > 0 }

// File is docs/benchmarks.json: the latest report of each label.
type File struct {
	Schema int                `json:"schema"`
	Runs   map[string]*Report `json:"runs"`
}

// Path is docs/benchmarks.json under the repository root.
func Path(root string) string { return filepath.Join(root, "docs", "benchmarks.json") }

// Load reads docs/benchmarks.json under the repository root root. A file of an older schema
// is an error, not a half-read report.
func Load(root string) (*File, error) {
	data, err := os.ReadFile(Path(root))
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", Path(root), err)
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %d, want %d (run go run ./kernel bench --write-docs)", Path(root), f.Schema, Schema)
	}
	if f.Runs == nil {
		f.Runs = map[string]*Report{}
	}
	return &f, nil
}

// Find returns the timed result of impl on the series key ("go/go", "pytorch/openblas") in
// mode, or nil.
func (r *Report) Find(impl, key string, mode Mode) *Result {
	for _, res := range r.Results {
		if res.Impl == impl && res.Key() == key && res.Mode == mode && res.MedianMS > 0 {
			return res
		}
	}
	return nil
}

// SDPA is series key's timed F.scaled_dot_product_attention in mode: the [SDPARow]'s, or another
// row's where PyTorch times the same call for it (flash attention's row, when fused was not run);
// nil where the series has none.
func (r *Report) SDPA(key string, mode Mode) *Result {
	if res := r.Find(SDPARow, key, mode); res != nil {
		return res
	}
	for _, res := range r.Results {
		if res.Name == "sdpa" && res.Key() == key && res.Mode == mode && res.MedianMS > 0 {
			return res
		}
	}
	return nil
}

// findAny is Find that also returns results that were not timed (with their Error).
func (r *Report) findAny(impl, key string, mode Mode) *Result {
	for _, res := range r.Results {
		if res.Impl == impl && res.Key() == key && res.Mode == mode {
			return res
		}
	}
	return nil
}

// Rows are the rows of the report in order of first appearance: formulations, or matmul sizes.
func (r *Report) Rows() []string {
	var rows []string
	for _, res := range r.Results {
		if !slices.Contains(rows, res.Impl) {
			rows = append(rows, res.Impl)
		}
	}
	return rows
}

// Timed are the rows of [Report.Rows] that at least one series timed in mode: a chart of mode
// has a group for each (forward + backward, say, is timed only for the run's --bwd-impls).
func (r *Report) Timed(mode Mode) []string {
	var rows []string
	for _, impl := range r.Rows() {
		for _, res := range r.Results {
			if res.Impl == impl && res.Mode == mode && res.MedianMS > 0 {
				rows = append(rows, impl)
				break
			}
		}
	}
	return rows
}

// NotTimed says why a chart of mode lacks bars ("" when it lacks none): first, for each column
// that could not run, its [Series.Skipped]; then for each row of [Report.Timed] and series without
// a time, the result's error ("fused in PyTorch (OpenBLAS):
// not in PyTorch 1.13.0a0"), then, where the run made no result at all, "not timed in this run"
// (the reference-BLAS PyTorch times only --ref-impls).
func (r *Report) NotTimed(mode Mode) string {
	var why []string
	untimed := false
	for _, s := range r.Series {
		if s.Skipped != "" {
			why = append(why, s.Name+": "+s.Skipped)
		}
	}
	for _, impl := range r.Timed(mode) {
		for _, s := range r.Series {
			if s.Skipped != "" || r.Find(impl, s.Key(), mode) != nil {
				continue
			}
			if res := r.findAny(impl, s.Key(), mode); res != nil && res.Error != "" {
				why = append(why, fmt.Sprintf("%s in %s: %s", impl, s.Name, strings.TrimPrefix(res.Error, "unsupported: ")))
			} else {
				untimed = true
			}
		}
	}
	switch {
	case untimed && len(why) > 0:
		why = append(why, "the others were not timed in this run")
	case untimed:
		why = append(why, "not timed in this run")
	}
	return strings.Join(why, "; ")
}

// Skipped says, for each column that has no times because it could not run ([Series.Skipped]),
// "NAME: no times: why".
func (r *Report) Skipped() []string {
	var out []string
	for _, s := range r.Series {
		if s.Skipped != "" {
			out = append(out, s.Name+": no times: "+s.Skipped)
		}
	}
	return out
}

// Modes are the modes of the report in order of first appearance.
func (r *Report) Modes() []Mode {
	var ms []Mode
	for _, res := range r.Results {
		if !slices.Contains(ms, res.Mode) {
			ms = append(ms, res.Mode)
		}
	}
	return ms
}

// SeriesName is the name of the series key, or the key itself.
func (r *Report) SeriesName(key string) string {
	for _, s := range r.Series {
		if s.Key() == key {
			return s.Name
		}
	}
	return key
}

// Ratio is the median of impl on series a over its median on series b in mode (0 if either
// was not timed): below 1, a is faster.
func (r *Report) Ratio(impl, a, b string, mode Mode) float64 {
	x, y := r.Find(impl, a, mode), r.Find(impl, b, mode)
	if x == nil || y == nil {
		return 0
	}
	return x.MedianMS / y.MedianMS
}

// Fastest is the fastest timed result on series key in mode, or nil.
func (r *Report) Fastest(key string, mode Mode) *Result {
	var best *Result
	for _, res := range r.Results {
		if res.Key() == key && res.Mode == mode && res.MedianMS > 0 && (best == nil || res.MedianMS < best.MedianMS) {
			best = res
		}
	}
	return best
}

// FLOPs is the floating-point work of one run of res: 2n³ for a matmul, the forward pass's
// [Size.FLOPs] (×3 for fwd+bwd) otherwise.
func (r *Report) FLOPs(res *Result) float64 {
	if res.Mode == Matmul {
		var n float64
		fmt.Sscan(res.Impl, &n)
		return 2 * n * n * n
	}
	f := r.Size.FLOPs()
	if res.Mode == Backward {
		f *= 3
	}
	return f
}

// Finish computes every result's median, minimum, maximum and GFLOP/s from its runs.
func (r *Report) Finish() {
	for _, res := range r.Results {
		if len(res.RunsMS) == 0 {
			continue
		}
		res.MedianMS = Median(res.RunsMS)
		res.MinMS, res.MaxMS = slices.Min(res.RunsMS), slices.Max(res.RunsMS)
		res.GFLOPS = math.Round(r.FLOPs(res)/(res.MedianMS/1e3)/1e9*1000) / 1000
	}
}

// Median of xs (0 for none).
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Quantile is the q-quantile of xs by linear interpolation between order statistics.
func Quantile(xs []float64, q float64) float64 {
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

// FormatRatio prints a ratio with 2 significant digits: "0.83x", "1.4x", "12x".
func FormatRatio(x float64) string {
	switch {
	case x <= 0 || math.IsNaN(x):
		return "—"
	case x < 1.995:
		return fmt.Sprintf("%.2fx", x)
	case x < 9.95:
		return fmt.Sprintf("%.1fx", x)
	}
	return fmt.Sprintf("%.0fx", x)
}

// FormatMS prints milliseconds with 3 significant digits (no decimals from 100 on).
func FormatMS(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.2f", ms)
}

// CellTime is how long one code cell of a notebook took to run.
type CellTime struct {
	Index     int     `json:"index"` // 0-based among all cells
	FirstLine string  `json:"first_line"`
	Seconds   float64 `json:"seconds"`
}

// NotebookCells is one executed notebook's cell timings.
type NotebookCells struct {
	Notebook string     `json:"notebook"`
	Cells    []CellTime `json:"cells"`
}

// CellStats summarizes cell latency over notebooks: the first code cell of each notebook is
// cold (a fresh kernel), every later one warm.
type CellStats struct {
	Notebooks   []NotebookCells `json:"notebooks"`
	ColdMedianS float64         `json:"cold_first_cell_median_s"`
	ColdMaxS    float64         `json:"cold_first_cell_max_s"`
	WarmMedianS float64         `json:"warm_cell_median_s"`
	WarmP90S    float64         `json:"warm_cell_p90_s"`
	WarmCells   int             `json:"warm_cells"`
	RunSeconds  float64         `json:"kernel_run_s"` // wall time of `go run ./kernel run`
	RunExit     int             `json:"kernel_run_exit"`
}

// SummarizeCells computes the cold and warm statistics of nbs.
func SummarizeCells(nbs []NotebookCells) *CellStats {
	st := &CellStats{Notebooks: nbs}
	var cold, warm []float64
	for _, nb := range nbs {
		for i, c := range nb.Cells {
			if i == 0 {
				cold = append(cold, c.Seconds)
			} else {
				warm = append(warm, c.Seconds)
			}
		}
	}
	round := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	if len(cold) > 0 {
		st.ColdMedianS, st.ColdMaxS = round(Median(cold)), round(slices.Max(cold))
	}
	if len(warm) > 0 {
		st.WarmMedianS, st.WarmP90S = round(Median(warm)), round(Quantile(warm, 0.9))
	}
	st.WarmCells = len(warm)
	return st
}

// bySeries orders results for stable output: by mode, row and series order.
func (r *Report) seriesKeys() []string {
	var keys []string
	for _, s := range r.Series {
		keys = append(keys, s.Key())
	}
	for _, res := range r.Results {
		if !slices.Contains(keys, res.Key()) {
			keys = append(keys, res.Key())
		}
	}
	return keys
}

// goSeries are the keys of the GoMLX series.
func (r *Report) goSeries() []string {
	var out []string
	for _, k := range r.seriesKeys() {
		if strings.HasPrefix(k, "go/") {
			out = append(out, k)
		}
	}
	return out
}

// torchSeries are the keys of the PyTorch series.
func (r *Report) torchSeries() []string {
	var out []string
	for _, k := range r.seriesKeys() {
		if strings.HasPrefix(k, "pytorch/") {
			out = append(out, k)
		}
	}
	return out
}
