// Package bench is `go run ./kernel bench`: the Go counterpart of the book's bonus "multi-head
// attention implementations" comparison, built on pkg/attention. The same causal multi-head
// self-attention (no dropout) is written eight ways ([Impls]), checked equal to each other and
// to PyTorch, then timed forward and forward+backward on every GoMLX backend that starts, side
// by side in one run with the same formulations in PyTorch as Debian ships it (reference BLAS)
// and with OpenBLAS: the host's PyTorch (Debian bookworm's 1.13) and the current one (Debian
// trixie's 2.6, with F.scaled_dot_product_attention in the fused row) in a Docker container of
// docker/torch/Dockerfile, whose columns say why they are empty where Docker is absent
// ([EnsureTorchImage], --current-torch). `--mode matmul` times one float32 matrix product against the machine's
// peak ([Peak]), with and without GOEXPERIMENT=simd; `--cells` measures notebook cell latency.
//
// The formulations, all computing out_proj(concat_h softmax(mask(Q_h·K_hᵀ)/√hd)·V_h):
//
//   - chapter: the chapter's vectorized MultiHeadAttention, one pkg/attention graph function per
//     line of its PyTorch forward.
//   - wrapper: MultiHeadAttentionWrapper, H heads with their own `[hd, d]` projections, then
//     out_proj.
//   - combined_qkv: one `[3d, d]` projection, view + permute + split.
//   - einsum: every product a graph.Einsum, the weights viewed per head.
//   - gomlx_layers: GoMLX's ml/layers/attention.MultiHeadAttention.
//   - fused: attention.FusedCausal, GoMLX's fused scaled dot-product attention.
//   - fast: attention.MultiHeadAttention with SetFast(true).
//   - flash: attention.FlashCausal, tiles with the online softmax (no `[T, T]` scores).
//
// Results are [benchdata.Report]s: written to out/bench/results.json and, with --write-docs,
// to docs/benchmarks.json (which notebook 09 reads through pkg/benchdata) and
// docs/benchmarks.md. `go test -bench . ./internal/bench/` times the formulations at the quick
// size.
package bench
