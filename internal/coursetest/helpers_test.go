package coursetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

func TestWithoutGradFn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tensor([[0.2996, 0.8053],\n        [0.2990, 0.8040]], grad_fn=<MmBackward0>)", "tensor([[0.2996, 0.8053],\n        [0.2990, 0.8040]])"},
		{"tensor([[0.1921, 0.1646],\n        [0.1935, 0.1663]],\n       grad_fn=<SoftmaxBackward0>)", "tensor([[0.1921, 0.1646],\n        [0.1935, 0.1663]])"},
		{"tensor([1.0000, 0.5000])", "tensor([1.0000, 0.5000])"},
		{"tensor([[1.0000, 2.0000]]], grad_fn=<CatBackward0>)", "tensor([[1.0000, 2.0000]]])"},
		{"tensor([[[ 0.1556,  0.0844]]],\n       grad_fn=<ViewBackward0>)\ntorch.Size([1, 3, 6])", "tensor([[[ 0.1556,  0.0844]]])\ntorch.Size([1, 3, 6])"},
		{"torch.Size([2, 6, 3])", "torch.Size([2, 6, 3])"},
	} {
		if got := strings.Join(WithoutGradFn(tc.in), "\n"); got != tc.want {
			t.Errorf("WithoutGradFn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWideLines(t *testing.T) {
	r := &nbrun.Result{Notebook: "nb", Cells: []nbrun.Cell{
		{Index: 1, Type: "markdown", Source: strings.Repeat("m", 200)},
		{Index: 2, Type: "code", Stdout: strings.Repeat("x", 110) + "\n" + strings.Repeat("é", 111) + "\n",
			Text: []string{"\t" + strings.Repeat("y", 102), "\t" + strings.Repeat("z", 103)}},
		{Index: 3, Type: "code", Source: "fmt.Println(tok.Decode(out))", Stdout: strings.Repeat("s", 200)},
	}}
	want := []string{
		`nb cell 2 prints a line 111 columns wide ("` + strings.Repeat("é", 111) + `")`,
		`nb cell 2 prints a line 111 columns wide ("\t` + strings.Repeat("z", 103) + `")`,
	}
	if got := wideLines(r, []string{"tok.Decode("}); !slices.Equal(got, want) {
		t.Errorf("wideLines = %q, want %q", got, want)
	}
	if got := wideLines(r, nil); len(got) != 3 {
		t.Errorf("wideLines without samples = %q, want 3 lines (the sample's too)", got)
	}
}
