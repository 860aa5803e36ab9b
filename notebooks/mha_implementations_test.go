package notebooks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// TestMHAImplementations runs notebook 09: its table is docs/benchmarks.json's full run, row by
// row, and its chart draws a bar per formulation.
func TestMHAImplementations(t *testing.T) {
	r := nbrun.Execute(t, "notebooks/09_mha_implementations.ipynb")
	checkClean(t, r)

	var docs struct {
		Runs map[string]struct { // "full", "quick", "cells"
			Label   string `json:"label"`
			Results []struct {
				Impl      string  `json:"impl"`
				Framework string  `json:"framework"`
				Mode      string  `json:"mode"`
				MedianMS  float64 `json:"median_ms"`
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(nbrun.Root(t), "docs/benchmarks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &docs); err != nil {
		t.Fatalf("docs/benchmarks.json: %v", err)
	}
	table := r.Find(t, "benchResult").Stdout
	charts := strings.Join(r.Find(t, "func barChart").HTML, "")
	found := 0
	for _, kind := range []string{"full", "quick"} {
		run := docs.Runs[kind]
		for _, res := range run.Results {
			if res.Mode != "forward" || res.Framework != "go" {
				continue
			}
			found++
			if want := fmt.Sprintf("%.1f", res.MedianMS); !strings.Contains(table, want) {
				t.Errorf("%s run: the table lacks %s's Go time %s:\n%s", run.Label, res.Impl, want, table)
			}
			if !strings.Contains(charts, res.Impl) {
				t.Errorf("the chart lacks a bar labelled %q", res.Impl)
			}
		}
	}
	if found < 6 {
		t.Errorf("docs/benchmarks.json has %d Go forward results, want at least the six formulations", found)
	}
	if !strings.Contains(charts, "<svg") {
		t.Errorf("the chart cell shows no SVG")
	}
}
