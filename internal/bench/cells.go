package bench

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

	"github.com/attnbook/attnbook/pkg/benchdata"
)

// ParseCellTimes reads the code cells' timings from an executed notebook's metadata (nbformat 4
// JSON; see CellTime for its resolution).
// Cells without both timestamps (not executed) are left out.
func ParseCellTimes(data []byte) ([]benchdata.CellTime, error) {
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
	var out []benchdata.CellTime
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
		out = append(out, benchdata.CellTime{Index: i, FirstLine: firstLine(c.Source), Seconds: t1.Sub(t0).Seconds()})
	}
	return out, nil
}

// runCellLine is one cell line of `go run ./kernel run`: "  cell %2d %7.2fs  first line".
var runCellLine = regexp.MustCompile(`^\s+cell\s+(\d+)\s+([0-9.]+)s\s+(?:FAILED )?(.*)$`)

// ParseRunOutput reads the per-cell wall times `go run ./kernel run` prints, by notebook (the
// path after "run: "). Lines it does not know are skipped.
func ParseRunOutput(out string) map[string][]benchdata.CellTime {
	res := map[string][]benchdata.CellTime{}
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
		res[current] = append(res[current], benchdata.CellTime{Index: idx, FirstLine: strings.TrimSpace(m[3]), Seconds: sec})
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

// RunCells is `bench --cells`: it executes every notebook with `KERNEL run -o DIR`, KERNEL being
// o.Kernel (the binary that runs the bench, so that two builds of the kernel compare their own
// cells), then reads the per-cell times it printed (or, failing that, the executed copies'
// metadata). It returns the report also when a notebook failed (the error then says so).
func RunCells(o Options, progress io.Writer) (*benchdata.Report, error) {
	if o.Kernel == "" {
		return nil, fmt.Errorf("bench --cells: no kernel binary to run the notebooks with")
	}
	notebooks, _ := filepath.Glob(filepath.Join(o.Root, "notebooks", "*.ipynb"))
	if len(notebooks) == 0 {
		return nil, fmt.Errorf("no notebooks in %s", filepath.Join(o.Root, "notebooks"))
	}
	sort.Strings(notebooks)
	dir := filepath.Join(o.Out, "executed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"run", "-o", dir}, notebooks...)
	fmt.Fprintf(progress, "bench: %s %s\n", o.Kernel, strings.Join(args, " "))
	cmd := exec.Command(o.Kernel, args...)
	cmd.Dir = o.Root
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = io.MultiWriter(progress, &out), progress
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	printed := ParseRunOutput(out.String())
	if runErr != nil && len(printed) == 0 {
		// Nothing ran (no kernel installed, a build error): one error, not one line per notebook.
		return nil, fmt.Errorf("kernel run failed before any notebook ran (its output is above): %w", runErr)
	}

	var nbs []benchdata.NotebookCells
	source := map[string]int{}
	for _, src := range notebooks {
		rel := "notebooks/" + filepath.Base(src)
		if cells, ok := printed[rel]; ok && len(cells) > 0 {
			nbs = append(nbs, benchdata.NotebookCells{Notebook: rel, Cells: cells})
			source["printed by kernel run"]++
			continue
		}
		path := filepath.Join(dir, filepath.Base(src))
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(progress, "bench: %s: not executed (%v)\n", filepath.Base(src), err)
			continue
		}
		cells, err := ParseCellTimes(data)
		if err != nil {
			fmt.Fprintf(progress, "bench: %s: %v\n", path, err)
			continue
		}
		nbs = append(nbs, benchdata.NotebookCells{Notebook: rel, Cells: cells})
		source["executed notebook metadata (1 s resolution)"]++
	}
	rep := newReport(o)
	rep.Cells = benchdata.SummarizeCells(nbs)
	rep.Cells.RunSeconds = math.Round(elapsed.Seconds()*10) / 10
	if runErr != nil {
		rep.Cells.RunExit = 1
		if ee, ok := runErr.(*exec.ExitError); ok {
			rep.Cells.RunExit = ee.ExitCode()
		}
		rep.Notes = append(rep.Notes, "kernel run failed: "+runErr.Error()+" (timings of the cells that ran are kept)")
	}
	rep.Seconds = rep.Cells.RunSeconds
	rep.Load[1] = loadAvg()
	for what, n := range source {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d notebook(s): cell times %s", n, what))
	}
	sort.Strings(rep.Notes)
	switch {
	case runErr != nil:
		return rep, fmt.Errorf("kernel run: %w", runErr)
	case len(nbs) == 0:
		return rep, fmt.Errorf("no cell timings found")
	}
	return rep, nil
}

// CellsText is the cell-latency summary as text.
func CellsText(c *benchdata.CellStats) string {
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
				fmt.Fprintf(&b, ", later median %.2fs", benchdata.Median(rest))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "cells: cold first cell median %.2fs (max %.2fs) over %d notebooks; warm cells median %.2fs, p90 %.2fs over %d cells\n",
		c.ColdMedianS, c.ColdMaxS, len(c.Notebooks), c.WarmMedianS, c.WarmP90S, c.WarmCells)
	return b.String()
}
