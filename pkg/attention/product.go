package attention

import (
	"slices"

	"github.com/attnbook/attnbook/internal/customgrad"

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
// Larger products, the benchmark sizes, use the backend's DotGeneral (backendProduct).
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
		return backendProduct(lhs, lhsContract, lhsBatch, rhs, rhsContract, rhsBatch)
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

// backendProduct is the backend's DotGeneral, with gradients written for the pure-Go backend when
// lhs is `[batch..., M, K]` and rhs `[batch..., N, K]` or `[batch..., K, N]` (batch axes leading,
// one free axis per side, lhs contracted on its last axis: Linear, Scores, ContextVectors).
//
// The backend multiplies in place only when the left operand is contracted on its last axis;
// otherwise it transposes both operands first. GoMLX writes rhs's gradient as the cotangent
// `[batch..., M, N]` contracted over M, so for a Linear's weight both dy `[rows, out]` and x
// `[rows, in]` were transposed, and each gradient was then copied by a transpose back to the
// input's layout that changes nothing. Here lhs's gradient is the cotangent times rhs, already in
// lhs's layout, and rhs's gradient contracts M with one operand transposed: the cotangent
// (giving `[batch..., N, K]`) or lhs (giving `[batch..., K, N]`), whichever moves fewer numbers,
// counting the transpose of the result into rhs's layout when it is the other one. One transpose
// per product for a Linear's weight and the attention's products, instead of two or three.
func backendProduct(lhs *Node, lhsContract int, lhsBatch []int, rhs *Node, rhsContract int, rhsBatch []int) *Node {
	dot := func(lhs, rhs *Node) *Node {
		return DotGeneral(lhs, []int{lhsContract}, lhsBatch, rhs, []int{rhsContract}, rhsBatch)
	}
	nb := len(lhsBatch)
	if lhs.Rank() != nb+2 || rhs.Rank() != nb+2 || lhsContract != nb+1 ||
		!slices.Equal(lhsBatch, axesUpTo(nb)) || !slices.Equal(rhsBatch, lhsBatch) {
		return dot(lhs, rhs)
	}
	m, k := lhs.Shape().Dim(nb), lhs.Shape().Dim(nb+1)
	rhsNK := rhsContract == nb+1 // rhs `[batch..., N, K]`, else `[batch..., K, N]`
	rhsFree, n := nb+1, rhs.Shape().Dim(nb+1)
	if rhsNK {
		rhsFree, n = nb, rhs.Shape().Dim(nb)
	}
	viaCot := transposeCotangent(m, n, k, rhsNK)
	gradients := func(cot *Node) []*Node { // cot `[batch..., M, N]`
		dLHS := DotGeneral(cot, []int{nb + 1}, lhsBatch, rhs, []int{rhsFree}, rhsBatch) // [batch..., M, K]
		var dRHS *Node
		if viaCot {
			dRHS = DotGeneral(transposeLast2(cot), []int{nb + 1}, lhsBatch, lhs, []int{nb}, lhsBatch) // [batch..., N, K]
			if !rhsNK {
				dRHS = transposeLast2(dRHS)
			}
		} else {
			dRHS = DotGeneral(transposeLast2(lhs), []int{nb + 1}, lhsBatch, cot, []int{nb}, lhsBatch) // [batch..., K, N]
			if rhsNK {
				dRHS = transposeLast2(dRHS)
			}
		}
		return []*Node{dLHS, dRHS}
	}
	return customgrad.With(func(in ...*Node) *Node { return dot(in[0], in[1]) }, gradients, lhs, rhs)
}

// transposeCotangent reports whether backendProduct takes rhs's gradient with the cotangent
// `[M, N]` transposed (the result is `[N, K]`) rather than lhs `[M, K]` (the result is `[K, N]`):
// whichever moves fewer numbers, counting the result's transpose when rhs (`[N, K]` when rhsNK,
// else `[K, N]`) is laid out the other way; on a tie, the way without it.
func transposeCotangent(m, n, k int, rhsNK bool) bool {
	viaCot, viaLHS := m*n, m*k
	if rhsNK {
		viaLHS += n * k
	} else {
		viaCot += n * k
	}
	return viaCot < viaLHS || viaCot == viaLHS && rhsNK
}

// transposeLast2 swaps x's last two axes: `[..., M, N]` → `[..., N, M]`. Past rank 2 it is two
// transposes the pure-Go backend has fast paths for, `[b, M, N]` → `[M, b, N]` (rows of N copied
// whole) and `[M, b·N]` → `[b·N, M]` (tiled, on every core), b the leading axes' size: the single
// permutation has none, and its element-by-element copy on one core took about twice as long (the
// attention products' gradients in nanoGPT's training step, `[12, 4, 64, 64]`: 0.9 against 0.4 ms).
func transposeLast2(x *Node) *Node {
	d := x.Shape().Dimensions
	r := len(d)
	if r == 2 {
		return Transpose(x, 0, 1)
	}
	m, n := d[r-2], d[r-1]
	b := x.Shape().Size() / max(m*n, 1)
	y := TransposeAllAxes(Reshape(x, b, m, n), 1, 0, 2) // [M, b, N]
	y = Transpose(Reshape(y, m, b*n), 0, 1)             // [b·N, M]
	return Reshape(y, concatInts(d[:r-2], []int{n, m})...)
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
