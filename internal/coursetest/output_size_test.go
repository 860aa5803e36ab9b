package coursetest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/gpt"
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

// TestNotebook10SavedSize executes notebook 10 in its short setting (as TestTrainAGPT does; the
// heads cells draw 2 blocks there, 4 in the default run) and checks what it weighs saved.
func TestNotebook10SavedSize(t *testing.T) {
	if _, _, err := gpt.LoadCorpus(nbrun.Root(t)); err != nil {
		nbrun.Missing(t, err.Error())
	}
	t.Setenv("ATTNBOOK_SHORT", "1")
	t.Setenv("ATTNBOOK_GPT_CHECKPOINTS", t.TempDir())
	r := nbrun.Execute(t, "notebooks/10_train_a_gpt.ipynb")
	if heads := r.Find(t, "showLayers(m, tok); err != nil"); len(heads.HTML) < 2 {
		t.Fatalf("the heads cell drew %d pictures, want one per block", len(heads.HTML))
	}
	CheckSavedSizes(t, r)
}
