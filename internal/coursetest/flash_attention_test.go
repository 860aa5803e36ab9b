package coursetest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

const flashNotebook = "notebooks/12_flash_attention.ipynb"

// TestFlashAttention runs notebook 12 as students get it: the online softmax's steps and the
// tiled attention print the numbers the prose walks through (notebook 01's softmax, the chapter's
// CausalAttention context vectors of seed 001), the pictures count the tiles, the memory table
// and the graph check say what the prose says, the measurement shows flash attention's peak
// memory below the chapter's with the gap widening, and the exercise stubs pass no check.
func TestFlashAttention(t *testing.T) {
	r := nbrun.Execute(t, flashNotebook)
	CheckClean(t, r)
	CheckBackendLine(t, r)

	for _, p := range []Printed{
		{Cell: "func journeyScores", Text: `
scores:          tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
softmax (nb 01): tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])`},
		// Section 1's prose: the max changes once, at step 2, where the sum 1 is rescaled by 0.5824.
		{Cell: "func onlineSoftmax", Text: `
step 1: score 0.9544 → running max 0.9544, running sum 1.0000
step 2: score 1.4950 → running max 1.4950, running sum 1.5824
        new max: old sum × exp(0.9544 − 1.4950) = × 0.5824
step 3: score 1.4754 → running max 1.4950, running sum 2.5630
step 4: score 0.8434 → running max 1.4950, running sum 3.0842
step 5: score 0.7070 → running max 1.4950, running sum 3.5390
step 6: score 1.0865 → running max 1.4950, running sum 4.2036
online softmax:  tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
softmax (nb 01): tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])`},
		// The chapter's CausalAttention(3, 2, 6, 0.0) after torch.manual_seed(123): seed 001's
		// context vectors. Six tiles of nine, the three diagonal ones masked; the last query
		// block's running max set by its first tile.
		{Cell: "func tiledAttention", Text: `
tile 1: queries 0–1 × keys 0–1 (diagonal: masked)  running max: tensor([[0.2200, 0.1840]])
tile 2: queries 2–3 × keys 0–1  running max: tensor([[0.1840, 0.0764]])
tile 3: queries 2–3 × keys 2–3 (diagonal: masked)  running max: tensor([[0.1840, 0.0764]])
tile 4: queries 4–5 × keys 0–1  running max: tensor([[0.1326, 0.0843]])
tile 5: queries 4–5 × keys 2–3  running max: tensor([[0.1326, 0.0843]])
tile 6: queries 4–5 × keys 4–5 (diagonal: masked)  running max: tensor([[0.1326, 0.0843]])
chapter's attention:
 tensor([[-0.4519,  0.2216],
        [-0.5874,  0.0058],
        [-0.6300, -0.0632],
        [-0.5675, -0.0843],
        [-0.5526, -0.0981],
        [-0.5299, -0.1081]])
tiled attention:
 tensor([[-0.4519,  0.2216],
        [-0.5874,  0.0058],
        [-0.6300, -0.0632],
        [-0.5675, -0.0843],
        [-0.5526, -0.0981],
        [-0.5299, -0.1081]])`},
		{Cell: "func tileSVG", Text: `
T = 6, blocks of 2: 6 of 9 tiles computed (3 on the diagonal, masked), 3 skipped (33%)
T = 1024, blocks of 128: 36 of 64 tiles computed (8 on the diagonal, masked), 28 skipped (44%)`},
	} {
		LinesInOrder(t, p.Cell, r.Find(t, p.Cell).Stdout, strings.Split(strings.TrimSpace(p.Text), "\n"))
	}
	for _, c := range []struct{ cell, want string }{
		{"func onlineSoftmax", `(?m)^largest difference: \S+ \(equal within 1e-6: true\); weights sum to 1\.0000$`},
		{"func tiledAttention", `(?m)^largest difference: \S+ \(equal within 1e-6: true\)$`},
		{"tiledAttention(q, k, v, 8, false)", `(?m)^37 tokens in blocks of 8: largest difference \S+ \(equal within 1e-6: true\)$`},
		{"func chapterCore", `(?m)^output:      relative difference \S+ \(within 1e-6: true\)$`},
	} {
		if out := r.Find(t, c.cell).Stdout; !regexp.MustCompile(c.want).MatchString(out) {
			t.Errorf("cell %q printed\n%s\nwant a line matching %s", c.cell, out, c.want)
		}
	}
	if out := r.Find(t, "func chapterCore").Stdout; strings.Count(out, "(within 1e-5: true)") != 3 {
		t.Errorf("the graph check does not find all three gradients within 1e-5 of the chapter's:\n%s", out)
	}

	CheckPictures(t, r, []Picture{{Cell: "func tileSVG", Contains: []string{
		"T = 6, blocks of 2", "6 of 9 tiles computed (3 masked), 3 skipped",
		"T = 1024, blocks of 128", "36 of 64 tiles computed (8 masked), 28 skipped"}}}, CellWith)

	// Section 4's prose: 12 GiB at 16,384 tokens, 48 GiB at 32,768, the flash state under
	// 200 MiB at 65,536; scores ×4 and flash ×2 per doubling.
	memory := r.Find(t, "func humanBytes").Stdout
	for _, want := range []string{
		"1024    48.0 MiB                3.8 MiB                       12×",
		"16384   12.0 GiB                50.2 MiB                     245×",
		"32768   48.0 GiB                99.8 MiB                     493×",
		"65536   192.0 GiB               198.8 MiB                    989×",
	} {
		if !strings.Contains(memory, want) {
			t.Errorf("the memory table lacks %q:\n%s", want, memory)
		}
	}

	checkFlashMeasurements(t, r.Find(t, "func measure(").Stdout)

	// The stubs: every check says not yet, none passes.
	for n, want := range map[int]string{1: "Exercise 1: not yet (0 of 4 checks pass)", 2: "Exercise 2: not yet (0 of 5 checks pass)"} {
		out := r.Find(t, fmt.Sprintf("c := begin(%d)", n)).Stdout
		if !strings.Contains(out, want) || strings.Contains(out, "✓") {
			t.Errorf("exercise %d with the stub printed\n%s\nwant %q and no ✓", n, out, want)
		}
	}
	if out := r.Find(t, "solved := 0").Stdout; !strings.HasSuffix(strings.TrimSpace(out), "0 of 2 solved") {
		t.Errorf("score cell printed %q, want it to end with 0 of 2 solved", out)
	}
}

// checkFlashMeasurements checks the prose after the measurement cell: at every length and pass
// flash attention's peak memory is below the chapter's, and among the forward passes the ratio
// shrinks as T grows.
func checkFlashMeasurements(t *testing.T, out string) {
	t.Helper()
	row := regexp.MustCompile(`(?m)^(forward|fwd\+bwd) +(\d+) +(\d+) ms, +(\d+) MiB +(\d+) ms, +(\d+) MiB +([\d.]+)×, ([\d.]+)×$`)
	rows := row.FindAllStringSubmatch(out, -1)
	if len(rows) != 4 {
		t.Fatalf("the measurement cell printed %d rows, want 4:\n%s", len(rows), out)
	}
	lastRatio := 2.0
	for _, m := range rows {
		chapter, _ := strconv.ParseFloat(m[4], 64)
		flash, _ := strconv.ParseFloat(m[6], 64)
		if chapter == 0 || flash == 0 {
			t.Logf("no peak memory here (not Linux?): %q", m[0])
			continue
		}
		if flash >= chapter {
			t.Errorf("%s T=%s: flash's peak %v MiB is not below the chapter's %v MiB", m[1], m[2], flash, chapter)
		}
		if m[1] == "forward" {
			ratio := flash / chapter
			if ratio >= lastRatio {
				t.Errorf("forward T=%s: flash ÷ chapter peak %.2f, not below the shorter length's %.2f (the prose says the gap widens)", m[2], ratio, lastRatio)
			}
			lastRatio = ratio
		}
	}
}

// TestFlashAttentionSolutions runs the exercises with the solutions the notebook folds under each
// task (its folded *Solution* block) put in the answer cells: every check passes. Only
// the first code cell (the helpers the checks use) and the exercises section run.
func TestFlashAttentionSolutions(t *testing.T) {
	nb := loadJSON(t, filepath.Join(nbrun.Root(t), flashNotebook))
	cells := nb["cells"].([]any)
	var kept []any
	solution := regexp.MustCompile("(?s)<b>Solution</b> \\(click to open\\)</summary>\\s*```go\n(.*?)\n```")
	exercises, firstCode, answers := false, false, 0
	var pending string
	for _, c := range cells {
		cell := c.(map[string]any)
		src := joinSource(cell["source"])
		if strings.HasPrefix(src, "## 6. Exercises") || strings.Contains(src, "\n## 6. Exercises") {
			exercises = true
		}
		switch {
		case cell["cell_type"] == "code" && !firstCode:
			firstCode = true
			kept = append(kept, cell)
		case !exercises:
		case cell["cell_type"] == "markdown":
			if m := solution.FindStringSubmatch(src); m != nil {
				pending = m[1]
			}
		case hasTag(cell, answerTag):
			if pending == "" {
				t.Fatalf("answer cell %q has no folded solution before it", src[:min(len(src), 40)])
			}
			if !strings.Contains(src, "// TODO") || strings.Contains(pending, "// TODO") {
				t.Errorf("answer cell %q: the stub must say // TODO and the solution must not", src[:min(len(src), 40)])
			}
			answers++
			kept = append(kept, codeCell(fmt.Sprintf("solution-%d", answers), pending, answerTag))
			pending = ""
		default:
			kept = append(kept, cell)
		}
	}
	if answers != 2 {
		t.Fatalf("%d answer cells with solutions, want 2", answers)
	}
	nb["cells"] = kept
	path := filepath.Join(t.TempDir(), "12_flash_attention_solutions.ipynb")
	saveJSON(t, path, nb)

	r := nbrun.Execute(t, path)
	CheckClean(t, r)
	for n, checks := range map[int]int{1: 4, 2: 5} {
		out := r.Find(t, fmt.Sprintf("c := begin(%d)", n)).Stdout
		if !strings.Contains(out, fmt.Sprintf("Exercise %d: solved ✓", n)) || strings.Count(out, "✓ ") != checks || strings.Contains(out, "✗") {
			t.Errorf("exercise %d with the solution printed\n%s\nwant %d ✓ and solved", n, out, checks)
		}
	}
	if out := r.Find(t, "solved := 0").Stdout; !strings.HasSuffix(strings.TrimSpace(out), "2 of 2 solved") {
		t.Errorf("score cell printed %q, want it to end with 2 of 2 solved", out)
	}
	for _, want := range []string{
		"✓ journey's scores cut after 2: m = 1.4950, l = 4.2036",
		"✓ scores around 1000: m = 1002.5, l = 1.3354, no overflow",
		"✓ T = 32768 in blocks of 1024: 528 computed, 496 skipped",
	} {
		if !strings.Contains(r.Stdout(), want) {
			t.Errorf("the solutions' checks lack %q", want)
		}
	}
}
