// Package mhabench is the Go counterpart of the book's bonus "multi-head attention
// implementations" comparison: the same causal multi-head self-attention (no dropout) written
// six ways as GoMLX graph functions, checked equal to each other, then timed forward and
// forward+backward on every backend that starts here, side by side with the same formulations
// in PyTorch.
//
// The formulations (see [Impls]), all computing out_proj(concat_h softmax(mask(Q_h·K_hᵀ/√hd))·V_h):
//
//   - wrapper: the chapter's MultiHeadAttentionWrapper, H separate CausalAttention heads, each
//     with its own [hd, d] projections, concatenated, then out_proj.
//   - chapter: the chapter's vectorized MultiHeadAttention: W_query, W_key, W_value, view +
//     transpose into heads, masked_fill(-inf), softmax(scores/√hd), merge heads, out_proj.
//   - combined_qkv: one [3d, d] projection, then view + permute + split into Q, K, V.
//   - einsum: projections, scores, context and out_proj as graph.Einsum equations.
//   - gomlx_layers: GoMLX's own layers.MultiHeadAttention. Its v0.26.0 code scales the logits
//     twice (query·1/√hd, then logits/√hd: 1/hd in all, see [MeasureLayersLogitScale]); the
//     bench compensates by loading its query weights multiplied by √hd.
//   - fast: what this package found fastest: 1/√hd folded into the query weights, weights kept
//     per head so products contract axes where they lie, and the causal structure exploited:
//     the queries are cut into blocks that only meet the keys up to their own block, so
//     about 7/16 of the T×T scores (at T=1024) are never computed.
//
// The entry point is [Main] (`go run ./kernel bench`; flags in [ParseFlags]); `go test -bench .`
// times every formulation at the quick size. Results and findings: docs/benchmarks.md.
package mhabench
