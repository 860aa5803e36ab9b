package attention_test

import (
	"github.com/attnbook/attnbook/pkg/attention"
	"github.com/attnbook/attnbook/pkg/backend"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
)

// Causal attention over seed 001's six tokens (queries, keys and values all the embeddings,
// `[1, 1, 6, 3]`) in blocks of 2 tokens: 6 of the 3×3 tiles computed, never the `[6, 6]` scores.
// The rows equal the chapter's causal attention (ScaledDotProduct with Causal(true)).
func ExampleFlashCausalBlock() {
	x := tensors.FromValue([][][][]float32{{seed001Inputs}}) // [B=1, H=1, T=6, hd=3]
	outs := MustExecOnceN(backend.MustDefault(), func(x *Node) (*Node, *Node) {
		flash := attention.FlashCausalBlock(x, x, x, 2)                       // [1, 1, 6, 3]
		chapter, _ := attention.ScaledDotProduct(x, x, x).Causal(true).Done() // [1, 1, 6, 3]
		return flash, chapter
	}, x)
	printRows(outs[0])
	printRows(outs[1])
	// Output:
	// 0.4300 0.1500 0.8900
	// 0.4993 0.5657 0.7572
	// 0.5249 0.6685 0.7148
	// 0.4541 0.6381 0.6314
	// 0.5206 0.5514 0.5236
	// 0.4219 0.6231 0.5507
	// 0.4300 0.1500 0.8900
	// 0.4993 0.5657 0.7572
	// 0.5249 0.6685 0.7148
	// 0.4541 0.6381 0.6314
	// 0.5206 0.5514 0.5236
	// 0.4219 0.6231 0.5507
}
