package coursetest

import (
	"strings"
	"testing"
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
