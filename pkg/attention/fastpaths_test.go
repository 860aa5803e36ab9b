package attention

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// TestFusedSoftmaxVJPAxis: the registered gradient serves the last axis only; a fused softmax
// over another axis fails with an error naming the node instead of a wrong gradient.
func TestFusedSoftmaxVJPAxis(t *testing.T) {
	if b := testBackend(t); !b.Capabilities().Operations[compute.OpTypeFusedSoftmax] {
		t.Skipf("%s has no fused softmax: fusedSoftmax builds graph.Softmax there, never this gradient", b)
	}
	x := torchrand.New(3).Randn(3, 5)
	var msg string
	func() {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		_, err := CallOnce(testBackend(t), func(in []*Node) *Node {
			return Gradient(ReduceAllSum(BackendFusedSoftmax(in[0], 0)), in[0])[0]
		}, x)
		if err != nil {
			msg = err.Error()
		}
	}()
	if !strings.Contains(msg, "only the softmax over the last axis") {
		t.Errorf("gradient of a fused softmax over axis 0: got %q, want an error about the axis", msg)
	}
}
