package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/benchdata"
)

// newReport starts the report of a run of o.
func newReport(o Options) *benchdata.Report {
	label := "custom"
	switch {
	case o.Cells:
		label = "cells"
	case slices.Contains(o.Modes, Matmul):
		label = "matmul"
	case o.Quick && o.Size == benchdata.Quick:
		label = "quick"
	case o.Size == benchdata.Full:
		label = "full"
	}
	if o.Label != "" {
		label = o.Label
	}
	r := &benchdata.Report{
		Schema:   benchdata.Schema,
		Label:    label,
		Date:     time.Now().UTC().Format(time.RFC3339),
		Command:  strings.TrimSpace("go run ./kernel bench " + strings.Join(o.Args, " ")),
		Machine:  machineInfo(),
		Versions: benchdata.Versions{Go: runtime.Version(), GoExperiment: goExperiment(), GOAMD64: buildSetting("GOAMD64"), GoMLX: moduleVersion("github.com/gomlx/gomlx")},
		Threads:  runtime.GOMAXPROCS(0),
		Load:     [2]string{loadAvg(), ""},
	}
	if label != "cells" && label != "matmul" {
		r.Size = o.Size
	}
	return r
}

// finish computes the statistics and closes the report's timing.
func finish(r *benchdata.Report, start time.Time) {
	r.Finish()
	r.Seconds = math.Round(time.Since(start).Seconds()*10) / 10
	r.Load[1] = loadAvg()
}

// goExperiment is the GOEXPERIMENT this binary was built with, from its build information.
func goExperiment() string { return buildSetting("GOEXPERIMENT") }

// buildSetting is the value of a setting in this binary's build information ("" if absent).
// GOAMD64 matters here: with GOEXPERIMENT=simd and GOAMD64 below v4, math.Exp is ~100× slower
// on the AVX-512 machine these docs were measured on (see docs/benchmarks.md).
func buildSetting(key string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == key {
				return s.Value
			}
		}
	}
	return ""
}

// hasSIMD reports whether this binary was built with GOEXPERIMENT=simd, which GoMLX's pure-Go
// backend needs for its AVX2/AVX-512 matrix kernels.
func hasSIMD() bool {
	for _, e := range strings.Split(goExperiment(), ",") {
		if e == "simd" {
			return true
		}
	}
	return false
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

// loadAvg is the 1-minute load average from /proc/loadavg, or "".
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return ""
}

// cpuInfo is what the bench reads from /proc/cpuinfo (Linux): the first processor's vendor,
// family, model name, "cpu MHz" and flags.
type cpuInfo struct {
	vendor string // "GenuineIntel", "AuthenticAMD"
	family int    // "cpu family": 25 is AMD Zen 3/4, 26 Zen 5
	model  string
	mhz    float64
	flags  []string
}

// readCPUInfo parses /proc/cpuinfo; fields it cannot read stay zero.
func readCPUInfo() cpuInfo {
	var c cpuInfo
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "vendor_id" && c.vendor == "":
			c.vendor = v
		case k == "cpu family" && c.family == 0:
			c.family, _ = strconv.Atoi(v)
		case k == "model name" && c.model == "":
			c.model = v
		case k == "cpu MHz" && c.mhz == 0:
			c.mhz, _ = strconv.ParseFloat(v, 64)
		case k == "flags" && c.flags == nil:
			c.flags = strings.Fields(v)
		}
	}
	return c
}

// machineInfo describes this machine.
func machineInfo() benchdata.Machine {
	c := readCPUInfo()
	m := benchdata.Machine{CPU: c.model, Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		MHz: int(math.Round(c.mhz)), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if m.CPU == "" {
		m.CPU = runtime.GOARCH
	}
	var simd []string
	for _, f := range []string{"avx2", "fma", "avx512f", "avx512_bf16", "amx_tile"} {
		if slices.Contains(c.flags, f) {
			simd = append(simd, f)
		}
	}
	m.Flags = strings.Join(simd, " ")
	if mem := memTotal(); mem > 0 {
		m.MemoryGiB = int(math.Round(float64(mem) / (1 << 30)))
	}
	return m
}

// Peak is the machine's float32 peak: the larger of a nominal figure from /proc/cpuinfo (cores ×
// "cpu MHz" × FLOP per cycle per core, see [flopPerCycle]) and the FMA throughput measured on
// all cores ([measureFMA]; it includes turbo clocks, which a VM's "cpu MHz" does not show). The
// larger of the two, so that a percentage of peak is never flattered by a low estimate.
func Peak() *benchdata.Peak {
	c := readCPUInfo()
	p := &benchdata.Peak{Cores: runtime.NumCPU(), GHz: math.Round(c.mhz) / 1000}
	var how string
	p.FLOPPerCycle, how = flopPerCycle(c)
	nominal := float64(p.Cores) * p.GHz * float64(p.FLOPPerCycle)
	p.Formula = fmt.Sprintf("nominal %d cores × %.3f GHz (/proc/cpuinfo cpu MHz) × %d FLOP/cycle (%s) = %.1f GFLOP/s",
		p.Cores, p.GHz, p.FLOPPerCycle, how, nominal)
	p.GFLOPS = nominal
	if m, what := measureFMA(); m > 0 {
		p.MeasuredGFLOPS = math.Round(m*10) / 10
		p.Formula += fmt.Sprintf("; measured %.1f GFLOP/s (%s)", m, what)
		p.GFLOPS = max(nominal, p.MeasuredGFLOPS)
	}
	if p.GFLOPS <= 0 {
		return nil
	}
	return p
}

// flopPerCycle is a core's float32 FLOP per cycle from its vector units: FMA units × lanes × 2
// (multiply and add). Intel cores with AVX-512 are counted with 2 512-bit units (Xeon Scalable
// Gold and Platinum; some Silver and Bronze have one: /proc/cpuinfo cannot tell). AMD's Zen 4
// (family 25) runs AVX-512 on two 256-bit pipes, 32 FLOP/cycle; Zen 5 (family 26) has full-width
// units, 64.
func flopPerCycle(c cpuInfo) (int, string) {
	avx512 := slices.Contains(c.flags, "avx512f")
	switch {
	case avx512 && c.vendor == "AuthenticAMD" && c.family < 26:
		return 32, "AMD Zen 4 AVX-512: 2 FMA pipes × 8 float32 lanes (256-bit datapath) × 2 FLOP"
	case avx512 && c.vendor == "AuthenticAMD":
		return 64, "AMD Zen 5 AVX-512: 2 FMA pipes × 16 float32 lanes (512-bit datapath) × 2 FLOP"
	case avx512:
		return 64, "AVX-512: 2 FMA units × 16 float32 lanes × 2 FLOP; 2 units assumed"
	case slices.Contains(c.flags, "avx2") && slices.Contains(c.flags, "fma"):
		return 32, "AVX2: 2 FMA units × 8 float32 lanes × 2 FLOP"
	default:
		return 8, "SSE: 2 units × 4 float32 lanes"
	}
}

// memTotal is the machine's memory in bytes (Linux /proc/meminfo), or 0 if unknown.
func memTotal() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	var kb int64
	if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err != nil {
		return 0
	}
	return kb << 10
}

// writeOutputs writes results.json into o.Out and, with o.WriteDocs, updates the docs.
func writeOutputs(o Options, r *benchdata.Report, stdout io.Writer) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(o.Out, "results.json")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	if o.WriteDocs {
		if err := WriteDocs(o.Root, r); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "updated docs/benchmarks.md and docs/benchmarks.json (section %q)\n", r.Label)
	}
	return nil
}

// Markers delimit the generated section of one label in docs/benchmarks.md.
func Markers(label string) (begin, end string) {
	return "<!-- bench:" + label + ":begin -->", "<!-- bench:" + label + ":end -->"
}

// WriteDocs stores r under its label in docs/benchmarks.json (dropping runs of an older schema)
// and rewrites its section of docs/benchmarks.md (between [Markers]; appended when missing).
func WriteDocs(root string, r *benchdata.Report) error {
	all, err := benchdata.Load(root)
	if err != nil {
		if !os.IsNotExist(err) && !strings.Contains(err.Error(), "schema") {
			return err
		}
		all = &benchdata.File{Runs: map[string]*benchdata.Report{}}
	}
	all.Schema = benchdata.Schema
	all.Runs[r.Label] = r
	data, err := json.MarshalIndent(all, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(benchdata.Path(root), append(data, '\n'), 0o644); err != nil {
		return err
	}
	mdPath := filepath.Join(root, "docs", "benchmarks.md")
	md, err := os.ReadFile(mdPath)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(mdPath, []byte(ReplaceSection(string(md), r.Label, r.Markdown())), 0o644)
}

// RenderDocs rewrites every section of docs/benchmarks.md from docs/benchmarks.json, measuring
// nothing: for when the generated text changes. It returns the labels rendered.
func RenderDocs(root string) ([]string, error) {
	all, err := benchdata.Load(root)
	if err != nil {
		return nil, err
	}
	mdPath := filepath.Join(root, "docs", "benchmarks.md")
	md, err := os.ReadFile(mdPath)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	out := string(md)
	labels := slices.Sorted(maps.Keys(all.Runs))
	for _, label := range labels {
		out = ReplaceSection(out, label, all.Runs[label].Markdown())
	}
	return labels, os.WriteFile(mdPath, []byte(out), 0o644)
}

// ReplaceSection replaces what lies between label's markers in doc with body, or appends the
// markers and body when doc has none.
func ReplaceSection(doc, label, body string) string {
	begin, end := Markers(label)
	section := begin + "\n" + strings.TrimRight(body, "\n") + "\n" + end
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		if doc != "" && !strings.HasSuffix(doc, "\n\n") {
			doc = strings.TrimRight(doc, "\n") + "\n\n"
		}
		return doc + section + "\n"
	}
	return doc[:i] + section + doc[j+len(end):]
}
