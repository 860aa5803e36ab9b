package coursetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// badInput is one bad input typed into a notebook cell, as a student would: the cell's main body.
// The cell must fail, the first line of its error must contain every string of want (the function,
// the argument and the values or shapes involved), and the next cell must run. A case marked works
// is an input that must NOT fail (a defect of issue 14 that looked like bad input).
type badInput struct {
	name  string
	code  string
	want  []string
	works bool
}

// badInputs is the corpus: attention, eager, torchrand and display, wrong shapes and ranks, heads
// that don't divide, bad dropout rates, a context too short, empty and huge tensors, NaN, labels and
// state dicts that don't fit, and issue 14's repro cases.
var badInputs = []badInput{
	// eager: shapes and ranks.
	{name: "matmul inner dims", code: `eager.MatMul(eager.Ones(2, 3), eager.Ones(2, 3))`, want: []string{"eager.MatMul", "[2 3]", "inner dimensions 3 and 2"}},
	{name: "mul no broadcast", code: `eager.Mul(eager.Ones(6, 3), eager.Ones(3, 6))`, want: []string{"eager.Mul", "[6 3]", "[3 6]"}},
	{name: "add no broadcast", code: `eager.Add(eager.Ones(2, 3), eager.Ones(4))`, want: []string{"eager.Add", "[2 3]", "[4]"}},
	{name: "view size", code: `eager.View(eager.Ones(12), 5, -1)`, want: []string{"eager.View", "12", "5"}},
	{name: "view two -1", code: `eager.View(eager.Ones(12), -1, -1)`, want: []string{"eager.View", "-1"}},
	{name: "reshape size", code: `eager.Reshape(eager.Ones(2, 3), 4, 2)`, want: []string{"eager.Reshape", "[2 3]", "4"}},
	{name: "transpose dim", code: `eager.Transpose(eager.Ones(2, 3), 0, 2)`, want: []string{"eager.Transpose", "2", "[2 3]"}},
	{name: "softmax dim", code: `eager.Softmax(eager.Ones(2, 3), 2)`, want: []string{"eager.Softmax", "2", "[2 3]"}},
	{name: "index range", code: `eager.Index(eager.Ones(2, 3), 5)`, want: []string{"eager.Index", "5", "[2 3]"}},
	{name: "slice dim", code: `eager.Slice(eager.Ones(2, 3), 2, 0, 1)`, want: []string{"eager.Slice", "2", "[2 3]"}},
	{name: "unsqueeze dim", code: `eager.Unsqueeze(eager.Ones(3), 2)`, want: []string{"eager.Unsqueeze", "2", "[3]"}},
	{name: "cat shapes", code: `eager.Cat(0, eager.Ones(2, 3), eager.Ones(2, 4))`, want: []string{"eager.Cat", "[2 3]", "[2 4]"}},
	{name: "stack shapes", code: `eager.Stack(0, eager.Ones(2), eager.Ones(3))`, want: []string{"eager.Stack", "[2]", "[3]"}},
	{name: "item of a matrix", code: `eager.Item(eager.Ones(2, 3))`, want: []string{"eager.Item", "[2 3]"}},
	{name: "dot lengths", code: `eager.Dot(eager.Ones(3), eager.Ones(4))`, want: []string{"eager.Dot", "[3]", "[4]"}},
	{name: "permute repeat", code: `eager.Permute(eager.Ones(2, 3), 0, 0)`, want: []string{"eager.Permute", "0"}},
	{name: "triu 1-D", code: `eager.Triu(eager.Ones(3), 0)`, want: []string{"eager.Triu", "[3]"}},
	{name: "sum dim", code: `eager.Sum(eager.Ones(2, 3), 3, false)`, want: []string{"eager.Sum", "3", "[2 3]"}},
	{name: "linear shapes", code: `eager.Linear(eager.Ones(2, 3), eager.Ones(4, 5), nil)`, want: []string{"eager.Linear", "[2 3]", "[4 5]"}},
	{name: "masked fill shape", code: `eager.MaskedFill(eager.Ones(2, 3), eager.Bool(eager.Ones(3, 2)), 0)`, want: []string{"eager.MaskedFill", "[2 3]", "[3 2]"}},
	// eager: values and sizes.
	{name: "zeros 2^40 x 2^40 (issue 14 #3)", code: `fmt.Println(eager.Item(eager.SumAll(eager.Zeros(1<<40, 1<<40))))`, want: []string{"eager.Zeros", "1099511627776"}},
	{name: "ones 2^40 x 2^40", code: `eager.Ones(1<<40, 1<<40)`, want: []string{"eager.Ones", "1099511627776"}},
	{name: "full 2^40 x 2^40", code: `eager.Full(0.5, 1<<40, 1<<40)`, want: []string{"eager.Full", "1099511627776"}},
	{name: "ones negative dim", code: `eager.Ones(-1, 3)`, want: []string{"eager.Ones", "-1"}},
	{name: "tensor of a string", code: `eager.Tensor("hello")`, want: []string{"eager.Tensor", "string"}},
	{name: "tensor ragged", code: `eager.Tensor([][]float64{{1, 2}, {3}})`, want: []string{"eager.Tensor", "2", "1"}},
	// torchrand.
	{name: "rand negative", code: `torchrand.New(1).Rand(-1, 3)`, want: []string{"torchrand", "Rand", "-1"}},
	{name: "randn huge", code: `torchrand.New(1).Randn(1<<40, 1<<40)`, want: []string{"torchrand", "Randn", "1099511627776"}},
	{name: "dropout 1.5", code: `torchrand.New(1).Dropout(eager.Ones(2, 2), 1.5)`, want: []string{"torchrand", "Dropout", "1.5"}},
	{name: "dropout -0.1", code: `torchrand.New(1).Dropout(eager.Ones(2, 2), -0.1)`, want: []string{"torchrand", "Dropout", "-0.1"}},
	{name: "dropout NaN", code: `torchrand.New(1).Dropout(eager.Ones(2, 2), math.NaN())`, want: []string{"torchrand", "Dropout", "NaN"}},
	{name: "linear in 0", code: `torchrand.New(1).Linear(0, 3, true)`, want: []string{"torchrand", "Linear", "0"}},
	{name: "randint low >= high", code: `torchrand.New(1).Randint(5, 5, 3)`, want: []string{"torchrand", "Randint", "5"}},
	// attention: construction.
	{name: "heads don't divide", code: `attention.NewMultiHeadAttention(torchrand.New(1), 3, 5, 6, 0, 2, false)`, want: []string{"attention.NewMultiHeadAttention", "5", "2"}},
	{name: "mha dropout 1.5", code: `attention.NewMultiHeadAttention(torchrand.New(1), 3, 4, 6, 1.5, 2, false)`, want: []string{"attention.NewMultiHeadAttention", "dropout", "1.5"}},
	{name: "causal dropout -0.1", code: `attention.NewCausalAttention(torchrand.New(1), 3, 4, 6, -0.1, false)`, want: []string{"attention.NewCausalAttention", "dropout", "-0.1"}},
	{name: "causal dropout NaN", code: `attention.NewCausalAttention(torchrand.New(1), 3, 4, 6, math.NaN(), false)`, want: []string{"attention.NewCausalAttention", "dropout", "NaN"}},
	{name: "v1 d_in 0", code: `attention.NewSelfAttentionV1(torchrand.New(1), 0, 2)`, want: []string{"attention.NewSelfAttentionV1", "0"}},
	{name: "cross heads don't divide", code: `attention.NewCrossAttention(torchrand.New(1), 3, 8, false)`, want: []string{"attention.NewCrossAttention", "3", "8"}},
	// attention: calls.
	{name: "context too short", code: `attention.NewCausalAttention(torchrand.New(1), 3, 4, 6, 0, false).Forward(eager.Ones(1, 7, 3))`, want: []string{"7", "6"}},
	{name: "wrong d_in", code: `attention.NewCausalAttention(torchrand.New(1), 3, 4, 6, 0, false).Forward(eager.Ones(1, 6, 5))`, want: []string{"[1 6 5]", "3"}},
	{name: "wrong rank", code: `attention.NewMultiHeadAttention(torchrand.New(1), 3, 4, 6, 0, 2, false).Forward(eager.Ones(6, 3))`, want: []string{"[6 3]"}},
	{name: "v2 rank 3", code: `attention.NewSelfAttentionV2(torchrand.New(1), 3, 2, false).Forward(eager.Ones(1, 1, 6, 3))`, want: []string{"[1 1 6 3]"}},
	{name: "cross d mismatch", code: `attention.NewCrossAttention(torchrand.New(1), 2, 8, false).Forward(eager.Ones(1, 4, 8), eager.Ones(1, 5, 6), eager.Ones(1, 5, 6), false)`, want: []string{"[1 5 6]", "8"}},
	{name: "load state dict shape", code: `m := attention.NewSelfAttentionV1(torchrand.New(1), 3, 2)
if err := m.LoadStateDict(map[string]*tensors.Tensor{"W_query": eager.Ones(2, 2), "W_key": eager.Ones(3, 2), "W_value": eager.Ones(3, 2)}); err != nil {
	panic(err)
}`, want: []string{"LoadStateDict", "W_query", "[2, 2]", "[3, 2]"}},
	{name: "load state dict key", code: `m := attention.NewSelfAttentionV1(torchrand.New(1), 3, 2)
if err := m.LoadStateDict(map[string]*tensors.Tensor{"W_q": eager.Ones(3, 2)}); err != nil {
	panic(err)
}`, want: []string{"LoadStateDict", "W_q"}},
	{name: "weight unknown", code: `attention.NewSelfAttentionV1(torchrand.New(1), 3, 2).Weight("W_query.weight")`, want: []string{"W_query.weight"}},
	// display.
	{name: "heatmap labels (issue 14 #4)", code: `display.ShowHeatmap(eager.Ones(3, 3), "a", "b")`, want: []string{"display.ShowHeatmap", `["a" "b"]`, "3"}},
	{name: "heatmap rank 3", code: `display.ShowHeatmap(eager.Ones(2, 3, 4))`, want: []string{"display.ShowHeatmap", "[2 3 4]"}},
	{name: "mask 0.3 (issue 14 #4)", code: `display.ShowMask(eager.Full(0.3, 3, 3))`, want: []string{"display.ShowMask", "0.3"}},
	{name: "mask 2", code: `display.ShowMask(eager.Full(2, 3, 3))`, want: []string{"display.ShowMask", "2"}},
	{name: "mask NaN", code: `display.ShowMask(eager.Full(math.NaN(), 3, 3))`, want: []string{"display.ShowMask", "nan"}},
	{name: "heads rank 2", code: `display.ShowHeads(eager.Ones(3, 3))`, want: []string{"display.ShowHeads", "[3 3]"}},
	{name: "show nil", code: `display.Show(nil)`, want: []string{"display.Show", "nil"}},
	{name: "figure tokens", code: `display.ShowFigure(display.Heatmap(eager.Ones(3, 3)).Tokens("a"))`, want: []string{"display.", `["a"]`, "3"}},
	{name: "table nil", code: `display.ShowTable(nil)`, want: []string{"display.ShowTable", "nil"}},
	// Inputs that must work (issue 14's repros of defects that looked like bad input).
	{name: "T = 1…40 on one module (issue 14 #1)", works: true, code: `g := torchrand.New(1)
m := attention.NewCausalAttention(g, 3, 4, 64, 0, false)
for T := 1; T <= 40; T++ {
	if _, err := m.Call(g.Rand(1, T, 3)); err != nil {
		panic(fmt.Sprintf("T=%d: %v", T, err))
	}
}
fmt.Println("40 lengths ok")`},
	{name: "ExploreHeads headless (issue 14 #2)", works: true, code: `display.ExploreHeads(eager.Full(0.25, 2, 4, 4), 3*time.Second)
fmt.Println("returned")`},
}

// imports lists the packages a cell's code refers to, by their package names.
func imports(code string) string {
	paths := map[string]string{
		"attention": "github.com/attnbook/attnbook/pkg/attention",
		"display":   "github.com/attnbook/attnbook/pkg/display",
		"eager":     "github.com/attnbook/attnbook/pkg/eager",
		"torchrand": "github.com/attnbook/attnbook/pkg/torchrand",
		"tensors":   "github.com/gomlx/gomlx/core/tensors",
		"math":      "math",
		"time":      "time",
		"fmt":       "fmt",
	}
	var lines []string
	for name, path := range paths {
		if strings.Contains(code, name+".") {
			lines = append(lines, fmt.Sprintf("\t%q", path))
		}
	}
	slices.Sort(lines)
	return "import (\n" + strings.Join(lines, "\n") + "\n)\n\n"
}

// badInputNotebook writes the corpus as a notebook: per case, the case's cell (tagged
// raises-exception unless it must work) and a cell that only proves the kernel goes on.
func badInputNotebook(t *testing.T) string {
	t.Helper()
	var cells []any
	for i, bc := range badInputs {
		code := imports(bc.code) + "%%\n// " + bc.name + "\n" + bc.code
		if bc.works {
			cells = append(cells, codeCell(fmt.Sprintf("case-%02d", i), code))
		} else {
			cells = append(cells, codeCell(fmt.Sprintf("case-%02d", i), code, "raises-exception"))
		}
		cells = append(cells, codeCell(fmt.Sprintf("next-%02d", i), fmt.Sprintf("%%%%\nfmt.Println(\"next cell after case %d runs\")", i)))
	}
	nb := map[string]any{
		"cells":    cells,
		"metadata": map[string]any{"kernelspec": map[string]any{"display_name": "Go (attnbook)", "language": "go", "name": "attnbook"}},
		"nbformat": 4, "nbformat_minor": 5,
	}
	data, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad_inputs.ipynb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var exitLine = regexp.MustCompile(`^(exit status \d+|signal: .*)$`)

// TestBadInputCorpus types every bad input of the corpus into a cell of one notebook run by the real
// kernel and checks that (a) the cell fails, (b) the first line of its error names the function, the
// argument and the values or shapes, (c) the next cell runs, and that the panic report is that one
// line. It logs the counts (tried / clear error / unclear error / crash / hang / silent wrong
// result) and the lines of panic report a student sees per error.
func TestBadInputCorpus(t *testing.T) {
	if len(badInputs) < 40 {
		t.Fatalf("the corpus has %d bad inputs, want at least 40", len(badInputs))
	}
	r, err := nbrun.Run(t, badInputNotebook(t), "-timeout", "3m")
	if err != nil && r == nil {
		t.Fatal(err)
	}
	code := r.Code()
	if want := 2 * len(badInputs); len(code) != want {
		t.Fatalf("executed notebook has %d code cells, want %d", len(code), want)
	}
	counts := map[string]int{}
	var reportSizes []int
	for i, bc := range badInputs {
		c, next := code[2*i], code[2*i+1]
		failed := len(c.Errors) > 0
		lines := reportLines(c.Stderr)
		first := ""
		if len(lines) > 0 {
			first = lines[0]
		} else if failed {
			first = c.Errors[0].Value
		}
		hung := failed && strings.Contains(c.Errors[0].Name+c.Errors[0].Value, "Timeout")
		nextRan := next.Executed && strings.Contains(next.Stdout, fmt.Sprintf("after case %d runs", i))
		var kind string
		switch {
		case !c.Executed:
			kind = "not run"
		case hung:
			kind = "hang"
		case !nextRan:
			kind = "crash"
		case bc.works && failed:
			kind = "failed (must work)"
		case bc.works:
			kind = "works"
		case !failed:
			kind = "silent wrong result"
		default:
			kind = "clear error"
			for _, w := range bc.want {
				if !strings.Contains(first, w) {
					kind = "unclear error"
				}
			}
			if !strings.HasPrefix(first, "panic: ") && !strings.Contains(first, ": ") {
				kind = "unclear error"
			}
			reportSizes = append(reportSizes, len(lines))
			// The kernel spec sets GOTRACEBACK=none: the student reads the one-line message, no
			// goroutine dump (`%env GOTRACEBACK single` in a cell brings the stack back).
			if len(lines) != 1 {
				t.Errorf("case %d %q: %d lines of panic report, want 1 (GOTRACEBACK=none in the kernel spec):\n%s", i, bc.name, len(lines), strings.Join(lines, "\n"))
			}
		}
		counts[kind]++
		t.Logf("case %2d %-40q %-12s %d lines: %s", i, bc.name, kind, len(lines), first)
		switch kind {
		case "clear error", "works":
		default:
			t.Errorf("case %d %q: %s; first line %q (want it to contain %q); stdout %q", i, bc.name, kind, first, bc.want, c.Stdout)
		}
	}
	slices.Sort(reportSizes)
	tried := len(badInputs) - counts["works"] - counts["failed (must work)"]
	t.Logf("bad-input corpus: tried %d: %d clear error, %d unclear error, %d crash, %d hang, %d silent wrong result; %d must-work inputs worked, %d failed",
		tried, counts["clear error"], counts["unclear error"], counts["crash"], counts["hang"], counts["silent wrong result"], counts["works"], counts["failed (must work)"])
	if n := len(reportSizes); n > 0 {
		t.Logf("lines of panic report per error (stderr, without the exit status line): min %d, median %d, max %d",
			reportSizes[0], reportSizes[n/2], reportSizes[n-1])
	}
}

// reportLines returns the non-empty lines of a failed cell's stderr, without GoNB's closing
// "exit status N": the panic report a student reads.
func reportLines(stderr string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if l != "" && !exitLine.MatchString(l) {
			lines = append(lines, l)
		}
	}
	return lines
}
