package coursetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/backend"
)

const (
	seed003Notebook  = "notebooks/07_data_for_a_gpt.ipynb"
	seed003CorpusURL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)

// seed003Corpus finds Tiny Shakespeare where notebook 07 looks for it ($ATTNBOOK_DATA when set,
// else shared/data next to the repository, else the repository's data folder, where
// `go run ./kernel setup` downloads it) and returns its text. Without it the test skips loudly,
// or fails under CI=true: the notebook 07 and 10 tests must run there.
func seed003Corpus(t *testing.T) string {
	t.Helper()
	root := nbrun.Root(t)
	places := []string{filepath.Join(root, "..", "shared", "data", "tinyshakespeare.txt"), filepath.Join(root, "data", "tinyshakespeare.txt")}
	if dir := os.Getenv("ATTNBOOK_DATA"); dir != "" {
		places = []string{filepath.Join(dir, "tinyshakespeare.txt")}
	}
	for _, p := range places {
		if data, err := os.ReadFile(p); err == nil {
			return string(data)
		}
	}
	nbrun.Missing(t, fmt.Sprintf("Tiny Shakespeare not found (looked in %s): `go run ./kernel setup` downloads it "+
		"(or save %s there). TestSeed003CorpusMissing still runs notebook 07 without it.", strings.Join(places, ", "), seed003CorpusURL))
	return ""
}

// seed003Output is what one cell (the first whose source contains Cell) must print: exactly Exact
// when set, and each of Contains.
type seed003Output struct {
	Cell     string
	Exact    string
	Contains []string
}

func seed003CheckOutputs(t *testing.T, r *nbrun.Result, table []seed003Output) {
	t.Helper()
	for _, tc := range table {
		c := r.Find(t, tc.Cell)
		if tc.Exact != "" && c.Stdout != tc.Exact {
			t.Errorf("cell %d (%q) printed\n%s\nwant\n%s", c.Index, tc.Cell, c.Stdout, tc.Exact)
		}
		for _, want := range tc.Contains {
			if !strings.Contains(c.Stdout, want) {
				t.Errorf("cell %d (%q) printed\n%s\nwant it to contain %q", c.Index, tc.Cell, c.Stdout, want)
			}
		}
	}
}

// Lines of notebook 07 that do not depend on the corpus: printed with or without it.
var seed003CorpusFree = []seed003Output{
	{Cell: "backend.Choose()", Contains: []string{"Using device: " + backend.Choose().Config + "\n"}},
	{Cell: `NewCharTokenizer([]rune("hello"))`, Exact: "Vocabulary size: 4\ntensor([0, 1, 2, 2, 3])\ntensor([0, 3, 2, 1])\nhole\n"},
	{Cell: "fmt.Sprintf(\"Position %d: x =\", pos)", Exact: "len(dataset) = 5\n" +
		"Position 0: x = tensor([1, 2, 3, 4]) y = tensor([2, 3, 4, 5])\n" +
		"Position 1: x = tensor([2, 3, 4, 5]) y = tensor([3, 4, 5, 6])\n" +
		"Position 2: x = tensor([3, 4, 5, 6]) y = tensor([4, 5, 6, 7])\n" +
		"Position 3: x = tensor([4, 5, 6, 7]) y = tensor([5, 6, 7, 8])\n" +
		"Position 4: x = tensor([5, 6, 7, 8]) y = tensor([6, 7, 8, 9])\n"},
	{Cell: "Given context", Exact: "Input:  [1, 2, 3, 4]\nTarget: [2, 3, 4, 5]\n" +
		"Given context [1] → predict 2\nGiven context [1, 2] → predict 3\n" +
		"Given context [1, 2, 3] → predict 4\nGiven context [1, 2, 3, 4] → predict 5\n"},
	{Cell: "eager.View(predictions, -1, vocabSize)", Exact: "torch.Size([32, 4, 1000])\ntorch.Size([32, 4])\ntorch.Size([128, 1000])\ntorch.Size([128])\n"},
	{Cell: "770.0/12", Exact: "768 / 12   = 64\n770 / 12   = 64\n770 % 12   = 2\n770.0 / 12 = 64.16666666666667\n-7 / 2     = -3\nhead_size  = 64\n"},
	{Cell: "config == attention.ShakespeareConfig()", Exact: "{\n  \"vocabulary_size\": 65,\n  \"context_size\": 256,\n  \"embedding_dim\": 768,\n  \"heads_num\": 12,\n" +
		"  \"layers_num\": 10,\n  \"dropout_rate\": 0.1,\n  \"use_bias\": false,\n  \"head_size\": 64\n}\n" +
		"the same as attention.ShakespeareConfig(): true\n"},
	{Cell: "eager.Tril(eager.Ones(4, 4), 0)", Exact: "tensor([[1., 0., 0., 0.],\n        [1., 1., 0., 0.],\n        [1., 1., 1., 0.],\n        [1., 1., 1., 1.]])\n"},
	{Cell: "output := ah.Forward(input)", Exact: "torch.Size([8, 256, 64])\n"},
	{Cell: "ah.LastWeights()", Exact: "weights.shape: torch.Size([8, 256, 256])\nevery row sums to 1: true\nlargest weight on a future token: 0\n"},
	{Cell: "attention.NewHeadList(g, config)", Exact: "parameters: 2360064\ntorch.Size([8, 256, 768])\n"},
}

// TestSeed003DataForAGPT runs notebook 07 with the corpus and checks every line it shares with
// seed document 003, plus the Go-only steps around them.
func TestSeed003DataForAGPT(t *testing.T) {
	corpus := seed003Corpus(t)
	r := nbrun.Execute(t, seed003Notebook)
	CheckClean(t, r)

	seed003CheckOutputs(t, r, seed003CorpusFree)
	seed003CheckOutputs(t, r, []seed003Output{
		{Cell: "func loadCorpus()", Contains: []string{"Read 1115394 characters from "}},
		{Cell: "string([]rune(text)[0:1000])", Exact: corpus[:1000] + "\n"}, // print(text[0:1000]); ASCII
		{Cell: `tokenizer.Encode("Hello world")`, Exact: "tensor([20, 43, 50, 50, 53,  1, 61, 53, 56, 50, 42])\nHello world\n"},
		{Cell: "Vocabulary size: %d", Exact: "Vocabulary size: 65\n" +
			`Vocabulary: "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"` + "\n"},
		{Cell: "NewTokenIdsDataset(data, 256)", Exact: "data.shape: torch.Size([1115394])\nlen(dataset): 1115138\n" +
			"x.shape: torch.Size([256])  y.shape: torch.Size([256])\n" +
			`x starts "First Citizen:\nBefor"` + "\n" + `y starts "irst Citizen:\nBefore"` + "\n"},
		{Cell: "display.Heatmap(eager.Index(weights, 0))", Exact: "tokens: torch.Size([14]) input: torch.Size([1, 14, 768]) weights: torch.Size([1, 14, 14])\n"},
	})
	if !strings.HasPrefix(corpus, "First Citizen:\nBefore we proceed any further, hear me speak.") {
		t.Errorf("the corpus does not start like Tiny Shakespeare: %q", corpus[:60])
	}

	heat := r.Find(t, "display.Heatmap(eager.Index(weights, 0))")
	if len(heat.HTML) != 1 {
		t.Fatalf("heatmap cell displayed %d HTML outputs, want 1 (outputs %+v)", len(heat.HTML), heat.Outputs)
	}
	for _, want := range []string{"<svg", "One untrained head on “First Citizen:” (causal)", "every row sums to 1", ">masked<", ">␣<"} {
		if !strings.Contains(heat.HTML[0], want) {
			t.Errorf("heatmap lacks %q", want)
		}
	}
}

// TestSeed003CorpusMissing runs notebook 07 with $ATTNBOOK_DATA naming an empty folder: the reading
// cell explains how to get the corpus, the cells that need it say they are skipped, nothing fails
// and the rest still prints its numbers.
func TestSeed003CorpusMissing(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("ATTNBOOK_DATA", empty)
	r := nbrun.Execute(t, seed003Notebook)
	CheckClean(t, r)

	want := filepath.Join(empty, "tinyshakespeare.txt")
	help := r.Find(t, "func loadCorpus()").Stdout
	for _, s := range []string{"Tiny Shakespeare (tinyshakespeare.txt, about 1.1 MB) is not on this machine", seed003CorpusURL,
		"\nIn a terminal in the repository, go run ./kernel setup downloads it (and checks it). Or by hand:\n",
		"and save it as\n    " + want + "\n", "\n    curl -L --create-dirs -o '" + want + "' \\\n        " + seed003CorpusURL + "\n", "Then run this cell again."} {
		if !strings.Contains(help, s) {
			t.Errorf("the corpus cell printed\n%s\nwant it to contain %q", help, s)
		}
	}
	const skipped = "(skipped: this cell needs Tiny Shakespeare; section 2 says how to get it)\n"
	for _, cell := range []string{"string([]rune(text)[0:1000])", `tokenizer.Encode("Hello world")`, "Vocabulary size: %d",
		"NewTokenIdsDataset(data, 256)", "display.Heatmap(eager.Index(weights, 0))"} {
		c := r.Find(t, cell)
		if c.Stdout != skipped || len(c.HTML)+len(c.SVG) > 0 {
			t.Errorf("without the corpus, cell %d (%q) printed %q (and %d pictures), want only %q", c.Index, cell, c.Stdout, len(c.HTML)+len(c.SVG), skipped)
		}
	}
	seed003CheckOutputs(t, r, seed003CorpusFree)
}
