package coursetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// Notebook 08 ships stubs (answer cells that compile and return zero values, `// TODO`); its twin
// 08_exercises_solutions has the answers. Both share every other cell.
const (
	exercisesNotebook = "notebooks/08_exercises.ipynb"
	solutionsNotebook = "notebooks/08_exercises_solutions.ipynb"
	numExercises      = 5
	answerTag         = "exercise-answer" // the cell tag of the answer cells
)

// verdicts returns, for exercises 1…5, the verdict line each check cell printed ("Exercise N: …"),
// from the check cells (those that call begin(N)).
func verdicts(t *testing.T, r *nbrun.Result) map[int]string {
	t.Helper()
	got := map[int]string{}
	verdict := regexp.MustCompile(`(?m)^Exercise (\d): ((?:solved|not yet).*)$`)
	for n := 1; n <= numExercises; n++ {
		c := r.Find(t, fmt.Sprintf("c := begin(%d)", n))
		m := verdict.FindAllStringSubmatch(c.Stdout, -1)
		if len(m) != 1 || m[0][1] != fmt.Sprint(n) {
			t.Errorf("check cell %d of exercise %d printed no single verdict line:\n%s", c.Index, n, c.Stdout)
			continue
		}
		got[n] = m[0][2]
	}
	return got
}

// score returns the last line of the score cell.
func score(t *testing.T, r *nbrun.Result) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.Find(t, "numExercises; n++").Stdout), "\n")
	return lines[len(lines)-1]
}

// stubFuncs are the functions each exercise's answer cell asks for.
var stubFuncs = map[int]string{1: "copyV2IntoV1", 2: "twoDimWrapper", 3: "gpt2Attention and mhaParams", 4: "changeFuture", 5: "stableSoftmax"}

// TestExercisesStubs runs the notebook as students get it: it runs to the end, every answer cell
// and every check says "not yet: replace the TODO" without a single ✓, and every ✗ is followed by
// one line of detail (no tensor dumps, no "error: <nil>").
func TestExercisesStubs(t *testing.T) {
	r := nbrun.Execute(t, exercisesNotebook)
	CheckClean(t, r)
	for n, v := range verdicts(t, r) {
		if want := fmt.Sprintf("not yet: replace the TODO in exercise %d (%s)", n, stubFuncs[n]); v != want {
			t.Errorf("exercise %d with the stub: verdict %q, want %q", n, v, want)
		}
		answer := r.Find(t, fmt.Sprintf("answered(%d)", n))
		if want := fmt.Sprintf("Exercise %d: not yet: replace the TODO in exercise %d (%s), then run this cell again.\n", n, n, stubFuncs[n]); answer.Stdout != want {
			t.Errorf("answer cell of exercise %d printed %q, want %q", n, answer.Stdout, want)
		}
		check := r.Find(t, fmt.Sprintf("c := begin(%d)", n)).Stdout
		lines := strings.Split(check, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "✗ not yet: ") && (i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    ") ||
				i+2 < len(lines) && strings.HasPrefix(lines[i+2], " ")) {
				t.Errorf("exercise %d: %q is not followed by exactly one indented line of detail:\n%s", n, l, check)
			}
		}
	}
	if c := r.Find(t, "c := begin(1)").Stdout; !strings.Contains(c, "✗ not yet: SelfAttention_v1 computes SelfAttention_v2's context vectors\n"+
		"    first difference at [0, 0]: got 0.2996, want -0.0739\n") {
		t.Errorf("exercise 1's check does not show the first difference:\n%s", c)
	}
	if out := r.Stdout(); strings.Contains(out, "<nil>") {
		t.Errorf("a check printed a nil error:\n%s", out)
	}
	if out := r.Stdout(); strings.Contains(out, "✓") {
		t.Errorf("a check passed with the stubs (a check the stub passes teaches nothing):\n%s", out)
	}
	if got, want := score(t, r), "0 of 5 solved"; got != want {
		t.Errorf("score %q, want %q", got, want)
	}
}

// TestExercisesSolutions runs the solutions: every check passes, and the numbers are the seeds'.
func TestExercisesSolutions(t *testing.T) {
	r := nbrun.Execute(t, solutionsNotebook)
	CheckClean(t, r)
	for n, v := range verdicts(t, r) {
		if v != "solved ✓" {
			t.Errorf("exercise %d with the solution: verdict %q, want solved ✓", n, v)
		}
	}
	if out := r.Stdout(); strings.Contains(out, "✗") || strings.Contains(out, "<nil>") || strings.Contains(out, "TODO") {
		t.Errorf("a check failed, printed a nil error or asked for a TODO with the solutions:\n%s", out)
	}
	if got, want := score(t, r), "5 of 5 solved"; got != want {
		t.Errorf("score %q, want %q", got, want)
	}
	// How many checks each exercise has: a check dropped by mistake shows here.
	for n, want := range map[int]int{1: 2, 2: 3, 3: 9, 4: 6, 5: 6} {
		c := r.Find(t, fmt.Sprintf("c := begin(%d)", n))
		if got := strings.Count(c.Stdout, "✓ "); got != want {
			t.Errorf("exercise %d: %d ✓, want %d:\n%s", n, got, want, c.Stdout)
		}
	}
	seed003CheckOutputs(t, r, []seed003Output{
		{Cell: "c := begin(1)", Contains: []string{
			// Seed 001: SelfAttention_v1 after seed 123, SelfAttention_v2 after seed 789.
			"sa_v1 before the copy: tensor([[0.2996, 0.8053],\n        [0.3061, 0.8210],",
			"sa_v2:                 tensor([[-0.0739,  0.0713],\n        [-0.0748,  0.0703],\n        [-0.0749,  0.0702],\n" +
				"        [-0.0760,  0.0685],\n        [-0.0763,  0.0679],\n        [-0.0754,  0.0693]])\n",
			"sa_v1 after the copy:  tensor([[-0.0739,  0.0713],\n        [-0.0748,  0.0703],\n        [-0.0749,  0.0702],\n" +
				"        [-0.0760,  0.0685],\n        [-0.0763,  0.0679],\n        [-0.0754,  0.0693]])\n",
		}},
		{Cell: "c := begin(3)", Contains: []string{
			"W_query.weight   torch.Size([768, 768])   589,824\n",
			"out_proj.bias    torch.Size([768])            768\n",
			"NumParams: 2,360,064\n", "formula:   2,360,064\n", "✓ GPT-2's attention has 2,360,064 parameters"}},
		{Cell: "c := begin(4)", Contains: []string{
			// Seed 001's vectorized MultiHeadAttention after seed 123 (cell 123), first batch element.
			"before: tensor([[0.3190, 0.4858],\n        [0.2943, 0.3897],\n        [0.2856, 0.3593],\n" +
				"        [0.2693, 0.3873],\n        [0.2639, 0.3928],\n        [0.2575, 0.4028]])\n",
			"after:  tensor([[0.3190, 0.4858],\n        [0.2943, 0.3897],\n        [0.2856, 0.3593],\n" +
				"        [0.2693, 0.3873],\n        [0.2639, 0.3928],\n"}},
		{Cell: "c := begin(5)", Contains: []string{
			"scores:        tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])\n",
			"yours:         tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])\n",
			"naive × 100:   tensor([nan, nan, nan, 0., 0., nan])"}},
	})
}

// TestExercisesStaleAnswers edits a copy of the solutions the way a student does: exercise 1's
// answer is changed into one that does not compile (GoNB then keeps the working version), exercise
// 5's into one that compiles but overflows. The checks must report exercise 1 as stale, not ✓, and
// exercise 5 as not yet; the score counts the three others.
func TestExercisesStaleAnswers(t *testing.T) {
	nb := loadJSON(t, filepath.Join(nbrun.Root(t), solutionsNotebook))
	cells := nb["cells"].([]any)
	var edited []any
	for _, c := range cells {
		edited = append(edited, c)
		cell := c.(map[string]any)
		src := joinSource(cell["source"])
		switch {
		case strings.Contains(src, "func copyV2IntoV1("):
			broken := strings.Replace(src, "return v1.LoadStateDict(", "return v1.LoadStateDic(", 1)
			edited = append(edited, codeCell("broken-1", broken, "raises-exception"))
		case strings.Contains(src, "func stableSoftmax("):
			i := strings.Index(src, "\tshifted :=")
			j := strings.Index(src, "\n}\n")
			wrong := src[:i] + "\texps := eager.Exp(x) // forgot the shift\n\treturn eager.Div(exps, eager.Sum(exps, -1, true))" + src[j:]
			edited = append(edited, codeCell("wrong-5", wrong))
		}
	}
	if len(edited) != len(cells)+2 {
		t.Fatalf("the answer cells of exercises 1 and 5 were not found in %s", solutionsNotebook)
	}
	nb["cells"] = edited
	path := filepath.Join(t.TempDir(), "08_exercises_edited.ipynb")
	saveJSON(t, path, nb)

	r := nbrun.Execute(t, path)
	broken := r.Find(t, "LoadStateDic(")
	if len(broken.Errors) == 0 {
		t.Errorf("the broken answer cell compiled: outputs %+v", broken.Outputs)
	}
	v := verdicts(t, r)
	want := map[int]string{1: "not yet (not checked)", 2: "solved ✓", 3: "solved ✓", 4: "solved ✓"}
	for n, w := range want {
		if v[n] != w {
			t.Errorf("exercise %d: verdict %q, want %q", n, v[n], w)
		}
	}
	if !strings.HasPrefix(v[5], "not yet (") {
		t.Errorf("exercise 5 with the overflowing softmax: verdict %q, want not yet", v[5])
	}
	stale := r.Find(t, "c := begin(1)").Stdout
	for _, s := range []string{"✗ not checked: the answer cell of exercise 1 did not run to the end", "stale answer"} {
		if !strings.Contains(stale, s) {
			t.Errorf("exercise 1's check after a failed compile printed\n%s\nwant it to contain %q", stale, s)
		}
	}
	if strings.Contains(stale, "✓") {
		t.Errorf("exercise 1's check passed something with a stale answer:\n%s", stale)
	}
	if c := r.Find(t, "c := begin(5)").Stdout; !strings.Contains(c, "✗ not yet: no nan on scores × 100\n") ||
		!strings.Contains(c, "✗ not yet: it equals torch.softmax (eager.Softmax) on scores × 100\n    first difference at [0]: got NaN, want 0.0000\n") {
		t.Errorf("exercise 5's check did not catch the overflow, or did not say where:\n%s", c)
	}
	if got, want := score(t, r), "3 of 5 solved"; got != want {
		t.Errorf("score %q, want %q", got, want)
	}
}

// TestExerciseNotebooksAgree keeps the twins in step without a kernel: same cells in the same order,
// equal except the title and the answer cells; stubs carry `// TODO` and return zero values,
// solutions do not.
func TestExerciseNotebooksAgree(t *testing.T) {
	root := nbrun.Root(t)
	stubs := loadJSON(t, filepath.Join(root, exercisesNotebook))["cells"].([]any)
	sols := loadJSON(t, filepath.Join(root, solutionsNotebook))["cells"].([]any)
	if len(stubs) != len(sols) {
		t.Fatalf("%d cells in %s, %d in %s", len(stubs), exercisesNotebook, len(sols), solutionsNotebook)
	}
	answers := 0
	for i := range stubs {
		a, b := stubs[i].(map[string]any), sols[i].(map[string]any)
		sa, sb := joinSource(a["source"]), joinSource(b["source"])
		switch {
		case i == 0: // the title
		case hasTag(a, answerTag) != hasTag(b, answerTag):
			t.Errorf("cell %d is an answer cell in one notebook only", i)
		case hasTag(a, answerTag):
			answers++
			if !strings.Contains(sa, "// TODO") || strings.Contains(sb, "// TODO") {
				t.Errorf("answer cell %d: the stub must say // TODO and the solution must not", i)
			}
			n := answers
			for _, src := range []string{sa, sb} {
				if !strings.HasPrefix(src, fmt.Sprintf("!*rm -f exercise-%d.*\n", n)) || !strings.HasSuffix(src, fmt.Sprintf("%%%%\nanswered(%d)", n)) {
					t.Errorf("answer cell %d must start with `!*rm -f exercise-%d.*` and end with `answered(%d)`:\n%s", i, n, n, src)
				}
			}
		case sa != sb:
			t.Errorf("cell %d differs between the exercises and the solutions:\n%s\n---\n%s", i, sa, sb)
		}
	}
	if answers != numExercises {
		t.Errorf("%d answer cells (tag %q), want %d", answers, answerTag, numExercises)
	}
}

func loadJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb map[string]any
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return nb
}

func saveJSON(t *testing.T, path string, nb map[string]any) {
	t.Helper()
	data, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// joinSource returns a cell's source, stored as one string or a list of lines.
func joinSource(src any) string {
	switch s := src.(type) {
	case string:
		return s
	case []any:
		var b strings.Builder
		for _, l := range s {
			b.WriteString(l.(string))
		}
		return b.String()
	}
	return ""
}

func hasTag(cell map[string]any, tag string) bool {
	meta, _ := cell["metadata"].(map[string]any)
	tags, _ := meta["tags"].([]any)
	for _, x := range tags {
		if x == tag {
			return true
		}
	}
	return false
}

// codeCell is a new code cell with the given id, source and tags.
func codeCell(id, src string, tags ...string) map[string]any {
	meta := map[string]any{}
	if len(tags) > 0 {
		meta["tags"] = tags
	}
	return map[string]any{"cell_type": "code", "id": id, "metadata": meta, "source": src, "outputs": []any{}, "execution_count": nil}
}
