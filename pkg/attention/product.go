package attention

import (
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// exactMaxElems bounds the multiply-adds (batch·m·k·n) of a product that the graph functions
// sum in PyTorch's order (see product); larger products go to the backend's DotGeneral. It is
// pkg/eager's bound, so a notebook cell and a graph agree on what is exact.
const exactMaxElems = 1 << 18

// product is DotGeneral with one contracting axis per side: the output is
// `[batch..., lhs free axes..., rhs free axes...]`, out = Σ_l lhs[…, l]·rhs[…, l].
//
// Small products (at most exactMaxElems multiply-adds) are summed in the order of the reference
// BLAS behind the seeds' PyTorch (and of PyTorch's own small-matrix loops): every product
// rounded to float32, added left to right from 0. The graph says so directly — a broadcast Mul
// to `[batch..., M, N, k]` and a ReduceSum over k, which the pure-Go backend sums in that
// order — so the printed digits do not depend on the matrix kernels (GoMLX v0.28's packed and
// SIMD kernels sum in blocks and with FMA; they moved seed 002's sharpest softmax by 1.1e-6).
// Larger products, the benchmark sizes, use DotGeneral.
func product(lhs *Node, lhsContract int, lhsBatch []int, rhs *Node, rhsContract int, rhsBatch []int) *Node {
	ld, rd := lhs.Shape().Dimensions, rhs.Shape().Dimensions
	k := ld[lhsContract]
	lhsFree, rhsFree := freeAxes(lhs.Rank(), lhsContract, lhsBatch), freeAxes(rhs.Rank(), rhsContract, rhsBatch)
	batch, m, n := 1, 1, 1
	var batchDims, mDims, nDims []int
	for _, a := range lhsBatch {
		batch *= ld[a]
		batchDims = append(batchDims, ld[a])
	}
	for _, a := range lhsFree {
		m *= ld[a]
		mDims = append(mDims, ld[a])
	}
	for _, a := range rhsFree {
		n *= rd[a]
		nDims = append(nDims, rd[a])
	}
	if batch*m*n*k > exactMaxElems {
		return DotGeneral(lhs, []int{lhsContract}, lhsBatch, rhs, []int{rhsContract}, rhsBatch)
	}
	nb := len(lhsBatch)
	l := TransposeAllAxes(lhs, concatInts(lhsBatch, lhsFree, []int{lhsContract})...) // [batch..., M..., k]
	r := TransposeAllAxes(rhs, concatInts(rhsBatch, rhsFree, []int{rhsContract})...) // [batch..., N..., k]
	l = Reshape(l, concatInts(batchDims, []int{m, 1, k})...)                         // [batch..., M, 1, k]
	r = Reshape(r, concatInts(batchDims, []int{1, n, k})...)                         // [batch..., 1, N, k]
	full := concatInts(batchDims, []int{m, n, k})
	p := Mul(BroadcastToDims(l, full...), BroadcastToDims(r, full...)) // [batch..., M, N, k]
	out := ReduceSum(p, nb+2)                                          // [batch..., M, N]
	return Reshape(out, concatInts(batchDims, mDims, nDims)...)        // [batch..., M..., N...]
}

// freeAxes lists the axes of a rank-r operand that are neither contracted nor batch, in order.
func freeAxes(r, contract int, batch []int) []int {
	used := map[int]bool{contract: true}
	for _, a := range batch {
		used[a] = true
	}
	var free []int
	for a := range r {
		if !used[a] {
			free = append(free, a)
		}
	}
	return free
}

// concatInts concatenates int slices into a new one.
func concatInts(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
