package mhabench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// CellTime is how long one code cell of a notebook took to run.
//
// Two sources: the lines `go run ./kernel run` prints ("  cell  4    0.70s  import …", nbclient's
// execute_cell timed by the client, 10 ms resolution), and the executed notebook's timing
// metadata, cell.metadata.execution["iopub.execute_input"] (the kernel starts the cell) to
// ["shell.execute_reply"] (the kernel replies). GoNB stamps its messages to the whole second
// (".000000Z", seen on notebooks executed here), so the metadata is only a fallback.
type CellTime struct {
	Index     int     `json:"index"` // 0-based among all cells
	FirstLine string  `json:"first_line"`
	Seconds   float64 `json:"seconds"`
}

// ParseCellTimes reads the code cells' timings from an executed notebook's metadata (nbformat 4
// JSON; see CellTime for its resolution).
// Cells without both timestamps (not executed) are left out.
func ParseCellTimes(data []byte) ([]CellTime, error) {
	var nb struct {
		Cells []struct {
			CellType string          `json:"cell_type"`
			Source   json.RawMessage `json:"source"`
			Metadata struct {
				Execution map[string]string `json:"execution"`
			} `json:"metadata"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	var out []CellTime
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		start, ok1 := c.Metadata.Execution["iopub.execute_input"]
		end, ok2 := c.Metadata.Execution["shell.execute_reply"]
		if !ok1 || !ok2 {
			continue
		}
		t0, err := time.Parse(time.RFC3339Nano, start)
		if err != nil {
			return nil, fmt.Errorf("cell %d: iopub.execute_input %q: %w", i, start, err)
		}
		t1, err := time.Parse(time.RFC3339Nano, end)
		if err != nil {
			return nil, fmt.Errorf("cell %d: shell.execute_reply %q: %w", i, end, err)
		}
		out = append(out, CellTime{Index: i, FirstLine: firstLine(c.Source), Seconds: t1.Sub(t0).Seconds()})
	}
	return out, nil
}

// runCellLine is one cell line of `go run ./kernel run`: "  cell %2d %7.2fs  first line".
var runCellLine = regexp.MustCompile(`^\s+cell\s+(\d+)\s+([0-9.]+)s\s+(?:FAILED )?(.*)$`)

// ParseRunOutput reads the per-cell wall times `go run ./kernel run` prints, by notebook (the
// path after "run: "). Lines it does not know are skipped.
func ParseRunOutput(out string) map[string][]CellTime {
	res := map[string][]CellTime{}
	current := ""
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "run: "); ok && strings.HasSuffix(name, ".ipynb") {
			current = name
			continue
		}
		m := runCellLine.FindStringSubmatch(line)
		if m == nil || current == "" {
			continue
		}
		idx, err1 := strconv.Atoi(m[1])
		sec, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		res[current] = append(res[current], CellTime{Index: idx, FirstLine: strings.TrimSpace(m[3]), Seconds: sec})
	}
	return res
}

func firstLine(src json.RawMessage) string {
	var lines []string
	if json.Unmarshal(src, &lines) != nil {
		var s string
		_ = json.Unmarshal(src, &s)
		lines = []string{s}
	}
	for _, l := range strings.Split(strings.Join(lines, ""), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return oneLine(l, 60)
		}
	}
	return ""
}

// CellStats summarizes cell latency over notebooks: the first code cell of each notebook is
// cold (GoNB builds its module and links the first program), every later one warm.
type CellStats struct {
	Notebooks   []NotebookCells `json:"notebooks"`
	ColdMedianS float64         `json:"cold_first_cell_median_s"`
	ColdMaxS    float64         `json:"cold_first_cell_max_s"`
	WarmMedianS float64         `json:"warm_cell_median_s"`
	WarmP90S    float64         `json:"warm_cell_p90_s"`
	WarmCells   int             `json:"warm_cells"`
	RunSeconds  float64         `json:"kernel_run_s"` // wall time of `go run ./kernel run` (incl. building the command)
	RunExit     int             `json:"kernel_run_exit"`
}

// NotebookCells is one executed notebook's cell timings.
type NotebookCells struct {
	Notebook string     `json:"notebook"`
	Cells    []CellTime `json:"cells"`
}

// SummarizeCells computes the cold and warm statistics.
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
	if len(cold) > 0 {
		st.ColdMedianS = round3(median(cold))
		st.ColdMaxS = round3(slicesMax(cold))
	}
	if len(warm) > 0 {
		st.WarmMedianS = round3(median(warm))
		st.WarmP90S = round3(quantile(warm, 0.9))
	}
	st.WarmCells = len(warm)
	return st
}

func slicesMax(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// mainCells is `bench --cells`: it executes every notebook with `go run ./kernel run -o DIR`,
// then reads the executed copies' timings.
func mainCells(o Options, stdout, stderr io.Writer) int {
	notebooks, _ := filepath.Glob(filepath.Join(o.Root, "notebooks", "*.ipynb"))
	if len(notebooks) == 0 {
		fmt.Fprintf(stderr, "bench: no notebooks in %s\n", filepath.Join(o.Root, "notebooks"))
		return 1
	}
	sort.Strings(notebooks)
	dir := filepath.Join(o.Out, "executed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	args := append([]string{"run", "./kernel", "run", "-o", dir}, notebooks...)
	fmt.Fprintf(stderr, "bench: go %s\n", strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Dir = o.Root
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = io.MultiWriter(stderr, &out), stderr
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	printed := ParseRunOutput(out.String())

	var nbs []NotebookCells
	source := map[string]int{}
	for _, src := range notebooks {
		rel := "notebooks/" + filepath.Base(src)
		if cells, ok := printed[rel]; ok && len(cells) > 0 {
			nbs = append(nbs, NotebookCells{Notebook: rel, Cells: cells})
			source["printed by kernel run"]++
			continue
		}
		path := filepath.Join(dir, filepath.Base(src))
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %s: not executed (%v)\n", filepath.Base(src), err)
			continue
		}
		cells, err := ParseCellTimes(data)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %s: %v\n", path, err)
			continue
		}
		nbs = append(nbs, NotebookCells{Notebook: rel, Cells: cells})
		source["executed notebook metadata (1 s resolution)"]++
	}
	rep := newReport(o)
	rep.Label = "cells"
	rep.Size = Size{}
	rep.GFLOP = 0
	rep.Cells = SummarizeCells(nbs)
	rep.Cells.RunSeconds = math.Round(elapsed.Seconds()*10) / 10
	if runErr != nil {
		rep.Cells.RunExit = 1
		if ee, ok := runErr.(*exec.ExitError); ok {
			rep.Cells.RunExit = ee.ExitCode()
		}
		rep.Notes = append(rep.Notes, "go run ./kernel run failed: "+runErr.Error()+" (timings of the cells that ran are kept)")
	}
	rep.Seconds = rep.Cells.RunSeconds
	rep.Load[1] = loadAvg()
	for what, n := range source {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d notebook(s): cell times %s", n, what))
	}
	sort.Strings(rep.Notes)
	if err := writeOutputs(o, rep, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, rep.CellsText())
	if runErr != nil || len(nbs) == 0 {
		return 1
	}
	return 0
}

// CellsText is the cell-latency summary as text.
func (r *Report) CellsText() string {
	c := r.Cells
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, nb := range c.Notebooks {
		fmt.Fprintf(&b, "%s: %d code cells", nb.Notebook, len(nb.Cells))
		if len(nb.Cells) > 0 {
			fmt.Fprintf(&b, ", first %.2fs", nb.Cells[0].Seconds)
			var rest []float64
			for _, x := range nb.Cells[1:] {
				rest = append(rest, x.Seconds)
			}
			if len(rest) > 0 {
				fmt.Fprintf(&b, ", later median %.2fs", median(rest))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "cells: cold first cell median %.2fs (max %.2fs) over %d notebooks; warm cells median %.2fs, p90 %.2fs over %d cells\n",
		c.ColdMedianS, c.ColdMaxS, len(c.Notebooks), c.WarmMedianS, c.WarmP90S, c.WarmCells)
	return b.String()
}
