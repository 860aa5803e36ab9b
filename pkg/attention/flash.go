package attention

import (
	"math"
	"runtime"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// FlashCausal is causal scaled dot-product attention, softmax(q @ k.T / sqrt(hd) + causal
// mask) @ v, computed tile by tile with the online softmax of FlashAttention (Dao et al. 2022,
// "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
// https://arxiv.org/abs/2205.14135; the backward pass of FlashAttention-2, Dao 2023,
// https://arxiv.org/abs/2307.08691): the `[B, H, T, T]` score matrix is never built.
//
// q, k and v are `[B, H, T, hd]` (the layout [SplitHeads] gives) of the same float dtype; the
// result is `[B, H, T, hd]`. Query i sees keys 0…i. No attention weights are returned and no
// dropout is applied: it is the evaluation-mode (or dropout-free training) attention of a causal
// module. Its block size is [FlashBlock](T); [FlashCausalBlock] takes another.
//
// The queries are cut into blocks of rows and the keys into blocks of the same size. Query
// block i meets key blocks 0…i in order — the tiles above the diagonal, which the causal mask
// would fill with -Inf entirely, are never computed — and keeps, per row, the running maximum
// m of the scores seen so far, the running sum l of exp(score − m), and the output so far; a
// new tile with a larger maximum rescales them by exp(m_old − m_new). Only the diagonal tiles
// are masked. Every tile's operations are batched over B·H; the tiles of one query block follow
// one another, and the query blocks in flight at once (independent graph branches, which the
// pure-Go backend runs side by side) are as many as fit in about 512 MiB of tiles, and at least
// 2·GOMAXPROCS, so memory stays bounded whatever the backend's scheduling.
//
// Its gradient (GoMLX's autodiff reaches q, k and v) is FlashAttention-2's: the tiles' softmax
// is recomputed from the saved per-row log-sum-exp instead of stored, so training needs no
// `[B, H, T, T]` tensor either. The results equal [ScaledDotProduct]'s with Causal(true) up to
// float32 rounding (the scores are summed in another order): within 1e-6 of the largest output
// at the seeds' sizes, and the gradients within 1e-5 (flash_test.go).
//
// Bad shapes panic with an *ArgumentError naming them.
func FlashCausal(q, k, v *Node) *Node {
	checkFlash("FlashCausal", q, k, v)
	block := FlashBlock(q.Shape().Dim(2))
	return flashCausal(q, k, v, block, flashChains(q, block))
}

// FlashCausalBlock is [FlashCausal] with query and key blocks of block rows (the last block of
// each may be shorter). block must be > 0; a block of T or more is one tile, plain attention.
func FlashCausalBlock(q, k, v *Node, block int) *Node {
	checkFlash("FlashCausalBlock", q, k, v)
	if block <= 0 {
		argPanic("FlashCausalBlock", "block", "must be > 0, got %d", block)
	}
	return flashCausal(q, k, v, block, flashChains(q, block))
}

// FlashBlock is the block size [FlashCausal] uses for T tokens: 128 rows (a `[128, 128]` float32
// tile is 64 KiB, an L2 cache's share per head) up to T = 4096, then T/32 (rounded up to a
// multiple of 128), so that a graph never holds more than 32·33/2 = 528 tiles: a graph node per
// operation of every tile, built and scheduled once per compile, costs more than it saves when
// the tiles get that many.
func FlashBlock(t int) int {
	const minBlock, maxBlocks = 128, 32
	if t <= minBlock*maxBlocks {
		return minBlock
	}
	b := (t + maxBlocks - 1) / maxBlocks
	return (b + minBlock - 1) / minBlock * minBlock
}

// checkFlash panics unless q, k and v are `[B, H, T, hd]` of one float dtype.
func checkFlash(fn string, q, k, v *Node) {
	checkRank(fn, "q", q, 4)
	checkRank(fn, "k", k, 4)
	checkRank(fn, "v", v, 4)
	checkFloat(fn, "q", q)
	if !k.Shape().Equal(q.Shape()) {
		argPanic(fn, "k", "shape %s must equal q shape %s, `[B, H, T, hd]`", k.Shape(), q.Shape())
	}
	if !v.Shape().Equal(q.Shape()) {
		argPanic(fn, "v", "shape %s must equal q shape %s, `[B, H, T, hd]`", v.Shape(), q.Shape())
	}
}

// flashInFlight is the memory FlashCausal lets its tiles in flight take: about three
// `[B, H, block, block]` tensors each (scores, exponentials, a product's operand).
const flashInFlight = 512 << 20

// flashChains is how many query blocks' tiles may be in flight at once: as many as fit in
// flashInFlight, and at least 2·GOMAXPROCS, enough to keep every core busy.
func flashChains(q *Node, block int) int {
	b, h := q.Shape().Dim(0), q.Shape().Dim(1)
	block = min(block, q.Shape().Dim(2))
	tile := 3 * b * h * block * block * q.DType().Size()
	return max(2*runtime.GOMAXPROCS(0), flashInFlight/max(tile, 1))
}

// flashTiles cuts T rows into blocks: the start of each block, and T at the end.
func flashTiles(t, block int) []int {
	var starts []int
	for s := 0; s < t; s += block {
		starts = append(starts, s)
	}
	return append(starts, t)
}

// flashGraph holds what the forward pass leaves for the backward pass.
type flashGraph struct {
	q, k, v *Node // q already scaled by 1/sqrt(hd); `[B, H, T, hd]`
	out     *Node // `[B, H, T, hd]`
	lse     *Node // log Σ_j exp(score_ij) per query row: `[B, H, T, 1]`
	starts  []int // block starts, then T
	scale   float64
	chains  int              // query blocks whose tiles may be in flight at once
	masks   map[[3]int]*Node // causal bias of a tile, by (query start, key start, rows·cols key)
}

// flashCausal is FlashCausal with a given block size and number of query blocks in flight, q,
// k and v checked.
func flashCausal(q, k, v *Node, block, chains int) *Node {
	t, hd := q.Shape().Dim(2), q.Shape().Dim(3)
	f := &flashGraph{starts: flashTiles(t, block), scale: 1 / math.Sqrt(float64(hd)), masks: map[[3]int]*Node{},
		chains: chains}
	f.q, f.k, f.v = MulScalar(StopGradient(q), f.scale), StopGradient(k), StopGradient(v)
	f.forward()

	// The gradient: one identity node over [out, q, k, v] stacked carries a custom gradient
	// that receives the output's cotangent (the other three get none) and returns the three
	// inputs' gradients, which Concatenate's own gradient hands to q, k and v.
	stacked := Concatenate([]*Node{InsertAxes(StopGradient(f.out), 0), InsertAxes(q, 0), InsertAxes(k, 0), InsertAxes(v, 0)}, 0) // [4, B, H, T, hd]
	stacked = IdentityWithCustomGradient(stacked, func(_, cot *Node) *Node {
		dOut := Squeeze(Slice(cot, AxisElem(0)), 0) // [B, H, T, hd]
		dq, dk, dv := f.backward(dOut)
		zeros := ZerosLike(dq)
		return Concatenate([]*Node{InsertAxes(zeros, 0), InsertAxes(dq, 0), InsertAxes(dk, 0), InsertAxes(dv, 0)}, 0)
	})
	return Squeeze(Slice(stacked, AxisElem(0)), 0) // [B, H, T, hd]
}

// rows is x[:, :, from:to, :] of a `[B, H, T, hd]` tensor.
func rowsOf(x *Node, from, to int) *Node {
	return Slice(x, AxisRange(), AxisRange(), AxisRange(from, to))
}

// bias is the causal mask of the tile of queries [qs, qe) and keys [ks, ke) as an additive
// `[Tq, Tk]` bias (0 or -Inf), or nil when no key of the tile is in any of its queries' future.
func (f *flashGraph) bias(g *Graph, dtype dtypes.DType, qs, qe, ks, ke int) *Node {
	if ke-1 <= qs {
		return nil
	}
	key := [3]int{qs - ks, qe - qs, ke - ks}
	if b, ok := f.masks[key]; ok {
		return b
	}
	s := shapes.Make(dtypes.Int32, qe-qs, ke-ks)
	future := GreaterThan(Iota(g, s, 1), AddScalar(Iota(g, s, 0), float64(qs-ks))) // [Tq, Tk]: key > query
	b := Where(future, Scalar(g, dtype, math.Inf(-1)), ScalarZero(g, dtype))       // [Tq, Tk]
	b = ExpandLeftToRank(b, 4)                                                     // [1, 1, Tq, Tk]
	f.masks[key] = b
	return b
}

// scores are the masked scores of the tile (query block i, key block j), q scaled:
// `[B, H, Tq, Tk]`, computed only once after (when not nil) has been.
//
// The ordering bounds the memory: every tile's scores depend on nothing but q and k, so a
// backend that runs every ready operation at once (the pure-Go backend with parallel
// scheduling, as pkg/backend starts it) would compute the scores of all tiles together and
// hold them all — the `[T, T]` matrix again, in pieces (measured: 13.9 GiB at T = 16384 with 12
// heads). Chained after the previous tile of their query block, and the first tile of block i
// after block i−chains, at most f.chains tiles are in flight (see flashChains).
func (f *flashGraph) scores(i, j int, after *Node) *Node {
	qs, qe, ks, ke := f.starts[i], f.starts[i+1], f.starts[j], f.starts[j+1]
	qb, kb := rowsOf(f.q, qs, qe), rowsOf(f.k, ks, ke) // [B, H, Tq, hd], [B, H, Tk, hd]
	if after != nil {
		kb = SchedulingBarrier(kb, after) // [B, H, Tk, hd]
	}
	s := DotGeneral(qb, []int{3}, []int{0, 1}, kb, []int{3}, []int{0, 1}) // [B, H, Tq, Tk]
	if b := f.bias(s.Graph(), s.DType(), qs, qe, ks, ke); b != nil {
		s = Add(s, b) // [B, H, Tq, Tk]
	}
	return s
}

// tile is the tile (query block i, key block j): the softmax of its masked scores with one more
// key whose score is the row's maximum, p `[B, H, Tq, Tk+1]`, and the log-sum-exp of each of
// its rows, lse_t = max + log Σ exp(score − max) `[B, H, Tq, 1]`.
//
// The softmax is the backend's fused one (see StableSoftmax) where it has it: one pass per row,
// where the softmax written op by op makes several over the whole tile. The extra key gets the
// weight e = 1/(l + 1), l = Σ exp(score − max) ≥ 1: the row's sum comes out of the softmax
// itself, as 1/e − 1, without a second pass over the tile (a ReduceMax of the weights took 15%
// longer at GPT-2's size); p's first Tk columns are the weights times l/(l + 1) = 1 − e.
func (f *flashGraph) tile(i, j int, after *Node) (p, lse *Node) {
	s := f.scores(i, j, after)                            // [B, H, Tq, Tk]
	tileMax := ReduceAndKeep(s, ReduceMax, -1)            // [B, H, Tq, 1]
	p = fusedSoftmax(Concatenate([]*Node{s, tileMax}, 3)) // [B, H, Tq, Tk+1]
	e := lastColumn(p)                                    // [B, H, Tq, 1]: 1/(l + 1)
	return p, Add(tileMax, Log(SubScalar(Reciprocal(e), 1)))
}

// lastRow is x[:, :, -1:, :] of a rank-4 x.
func lastRow(x *Node) *Node {
	n := x.Shape().Dim(2)
	return rowsOf(x, n-1, n)
}

// lastColumn is x[..., -1:] of a rank-4 x.
func lastColumn(x *Node) *Node {
	n := x.Shape().Dim(3)
	return Slice(x, AxisRange(), AxisRange(), AxisRange(), AxisRange(n-1, n))
}

// forward sets f.out and f.lse: for each query block, the online softmax over its
// key blocks. The running state per row is the output o (normalised over the keys seen so far)
// and the log-sum-exp of their scores; a tile with log-sum-exp lse_t and output o_t = p @ v_j
// merges in with the weights exp(lse − lse_new) and exp(lse_t − lse_new), where
// lse_new = log(exp(lse) + exp(lse_t)): the running max m and running sum l of the online
// softmax (lse = m + log l), rescaled by exp(m_old − m_new) as a new maximum comes in.
func (f *flashGraph) forward() {
	n := len(f.starts) - 1
	outs, lses := make([]*Node, n), make([]*Node, n)
	for i := range n {
		var o, lse *Node // [B, H, Tq, hd], [B, H, Tq, 1]
		for j := 0; j <= i; j++ {
			after := o // the previous tile of this query block
			if j == 0 && i >= f.chains {
				after = outs[i-f.chains]
			}
			p, lseT := f.tile(i, j, after)
			vb := rowsOf(f.v, f.starts[j], f.starts[j+1])                         // [B, H, Tk, hd]
			vb = Concatenate([]*Node{vb, ZerosLike(lastRow(vb))}, 2)              // [B, H, Tk+1, hd]: the extra key's value is 0
			oT := DotGeneral(p, []int{3}, []int{0, 1}, vb, []int{2}, []int{0, 1}) // [B, H, Tq, hd]
			oT = Div(oT, OneMinus(lastColumn(p)))                                 // [B, H, Tq, hd]: the tile's output
			if o == nil {
				o, lse = oT, lseT
				continue
			}
			m := Max(lse, lseT)                         // [B, H, Tq, 1]
			a, b := Exp(Sub(lse, m)), Exp(Sub(lseT, m)) // [B, H, Tq, 1]: one of them is 1
			sum := Add(a, b)                            // [B, H, Tq, 1]
			o = Div(Add(Mul(o, a), Mul(oT, b)), sum)    // [B, H, Tq, hd]
			lse = Add(m, Log(sum))                      // [B, H, Tq, 1]
		}
		outs[i], lses[i] = o, lse
	}
	f.out, f.lse = Concatenate(outs, 2), Concatenate(lses, 2) // [B, H, T, hd], [B, H, T, 1]
}

// backward is FlashAttention-2's backward pass for the output's cotangent dOut `[B, H, T, hd]`:
// per tile, P = exp(S − lse) recomputed from the scores, dV_j += Pᵀ dO_i,
// dS = P ⊙ (dO_i V_jᵀ − D_i) with D = rowsum(dO ⊙ O), dQ_i += dS K_j, dK_j += dSᵀ Q_i. It
// returns the gradients of the unscaled q, k and v.
func (f *flashGraph) backward(dOut *Node) (dq, dk, dv *Node) {
	n := len(f.starts) - 1
	d := ReduceAndKeep(Mul(dOut, f.out), ReduceSum, -1) // [B, H, T, 1]
	dqs, dks, dvs := make([]*Node, n), make([]*Node, n), make([]*Node, n)
	acc := func(sum, x *Node) *Node {
		if sum == nil {
			return x
		}
		return Add(sum, x)
	}
	for i := range n {
		qs, qe := f.starts[i], f.starts[i+1]
		qb, dOb := rowsOf(f.q, qs, qe), rowsOf(dOut, qs, qe) // [B, H, Tq, hd]
		lse, db := rowsOf(f.lse, qs, qe), rowsOf(d, qs, qe)  // [B, H, Tq, 1]
		for j := 0; j <= i; j++ {
			ks, ke := f.starts[j], f.starts[j+1]
			kb, vb := rowsOf(f.k, ks, ke), rowsOf(f.v, ks, ke) // [B, H, Tk, hd]
			after := dqs[i]                                    // the previous tile of this query block
			if j == 0 && i >= f.chains {
				after = dqs[i-f.chains]
			}
			if after != nil {
				vb = SchedulingBarrier(vb, after) // dP too waits for the previous tile
			}
			p := Exp(Sub(f.scores(i, j, after), lse))                                              // [B, H, Tq, Tk]
			dvs[j] = acc(dvs[j], DotGeneral(p, []int{2}, []int{0, 1}, dOb, []int{2}, []int{0, 1})) // [B, H, Tk, hd]
			dp := DotGeneral(dOb, []int{3}, []int{0, 1}, vb, []int{3}, []int{0, 1})                // [B, H, Tq, Tk]
			ds := Mul(p, Sub(dp, db))                                                              // [B, H, Tq, Tk]
			dqs[i] = acc(dqs[i], DotGeneral(ds, []int{3}, []int{0, 1}, kb, []int{2}, []int{0, 1})) // [B, H, Tq, hd]
			dks[j] = acc(dks[j], DotGeneral(ds, []int{2}, []int{0, 1}, qb, []int{2}, []int{0, 1})) // [B, H, Tk, hd]
		}
	}
	dq = MulScalar(Concatenate(dqs, 2), f.scale) // [B, H, T, hd]
	return dq, Concatenate(dks, 2), Concatenate(dvs, 2)
}
