package coursetest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// Issue 29: a student saves, syncs and hands in executed notebooks, and Jupyter's front ends slow
// down on heavy outputs. Before, notebook 10 saved with its outputs weighed 6.5 MB (each
// "all layers" heatmap cell ~3.1 MB of SVG rectangles).
const (
	maxSavedNotebook = 1 << 20   // bytes of an executed notebook, as saved
	maxSavedOutput   = 200 << 10 // bytes of one output, as saved
)

// CheckSavedSizes fails when the executed notebook r, as saved, weighs more than maxSavedNotebook,
// or one of its outputs more than maxSavedOutput (measured as Jupyter writes it: JSON with an
// indent of 1). It logs the total and the heaviest output.
func CheckSavedSizes(t *testing.T, r *nbrun.Result) {
	t.Helper()
	data, err := os.ReadFile(r.Executed)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > maxSavedNotebook {
		t.Errorf("%s executed weighs %d bytes, want at most %d", r.Notebook, len(data), maxSavedNotebook)
	}
	var nb struct {
		Cells []struct {
			Source  any               `json:"source"`
			Outputs []json.RawMessage `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", r.Executed, err)
	}
	heaviest, where := 0, ""
	for i, c := range nb.Cells {
		for j, o := range c.Outputs {
			var v any
			if err := json.Unmarshal(o, &v); err != nil {
				t.Fatal(err)
			}
			saved, _ := json.MarshalIndent(v, "", " ")
			first, _, _ := strings.Cut(joinSource(c.Source), "\n")
			if len(saved) > maxSavedOutput {
				t.Errorf("%s cell %d (%q) output %d weighs %d bytes, want at most %d", r.Notebook, i, first, j, len(saved), maxSavedOutput)
			}
			if len(saved) > heaviest {
				heaviest, where = len(saved), first
			}
		}
	}
	t.Logf("%s executed: %d bytes in all; heaviest output %d bytes (cell %q)", r.Notebook, len(data), heaviest, where)
}
