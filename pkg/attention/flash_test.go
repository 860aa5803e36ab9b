package attention

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// flashReference is the chapter's attention core, one line of its PyTorch forward per call:
// scores, causal mask fill, scaling, softmax, context vectors. q, k, v `[B, H, T, hd]`.
func flashReference(q, k, v *Node) *Node {
	scores := CausalMaskFill(Scores(q, k))                          // [B, H, T, T]
	weights := StableSoftmax(ScaleScores(scores, q.Shape().Dim(3))) // [B, H, T, T]
	return ContextVectors(weights, v)                               // [B, H, T, hd]
}

// TestFlashCausal checks FlashCausalBlock against the chapter's attention, forward and
// backward, for blocks that divide T, that do not, of one row, and of all of T (one tile).
func TestFlashCausal(t *testing.T) {
	for _, c := range []struct {
		b, h, t, hd, block int // block 0: FlashCausal's; < 0: -block, with 2 query blocks in flight
	}{
		{1, 1, 6, 2, 2},    // the seeds' six tokens, 3×3 tiles
		{2, 3, 37, 8, 8},   // a short last block
		{2, 2, 16, 4, 1},   // blocks of one row: the online softmax one key at a time
		{1, 2, 20, 5, 64},  // one tile
		{1, 2, 300, 16, 0}, // FlashCausal's own block (128): 3×3 tiles, the last short
		{2, 2, 40, 4, -4},  // blocks of 4, 2 query blocks in flight: block i waits for block i−2
	} {
		t.Run(fmt.Sprintf("%dx%dx%dx%d_block%d", c.b, c.h, c.t, c.hd, c.block), func(t *testing.T) {
			g := torchrand.New(int64(c.t))
			q, k, v := g.Randn(c.b, c.h, c.t, c.hd), g.Randn(c.b, c.h, c.t, c.hd), g.Randn(c.b, c.h, c.t, c.hd)
			outs := runN(t, func(in []*Node) []*Node {
				var flash *Node
				switch {
				case c.block == 0:
					flash = FlashCausal(in[0], in[1], in[2])
				case c.block < 0:
					flash = flashCausal(in[0], in[1], in[2], -c.block, 2)
				default:
					flash = FlashCausalBlock(in[0], in[1], in[2], c.block)
				}
				chapter := flashReference(in[0], in[1], in[2])
				// A loss that weighs every output differently, so every gradient entry matters.
				wts := AddScalar(Iota(in[0].Graph(), flash.Shape(), 3), 1)
				wts = Add(wts, Iota(in[0].Graph(), flash.Shape(), 2))
				got := Gradient(ReduceAllSum(Mul(flash, wts)), in[0], in[1], in[2])
				want := Gradient(ReduceAllSum(Mul(chapter, wts)), in[0], in[1], in[2])
				return append([]*Node{flash, chapter}, append(got, want...)...)
			}, q, k, v)
			assertClose(t, "FlashCausal vs the chapter", outs[0], outs[1], relTol)
			for i, name := range []string{"dq", "dk", "dv"} {
				assertClose(t, "FlashCausal gradient "+name, outs[2+i], outs[5+i], 1e-5)
				if maxAbs(flat(outs[2+i])) == 0 {
					t.Errorf("FlashCausal gradient %s is all zeros", name)
				}
			}
			// Causal: query 0 sees key 0 only, so its output is v's row 0.
			o, vv := flat(outs[0]), flat(v)
			for j := range c.hd {
				if d := o[j] - vv[j]; d > 1e-6 || d < -1e-6 {
					t.Fatalf("output [0,0,0,%d] = %v, want v[0,0,0,%d] = %v", j, o[j], j, vv[j])
				}
			}
		})
	}
}

// TestFlashBlock pins the block sizes FlashCausal picks.
func TestFlashBlock(t *testing.T) {
	for _, c := range []struct{ t, want int }{
		{1, 128}, {1024, 128}, {4096, 128}, {4097, 256}, {16384, 512}, {32768, 1024}, {65536, 2048},
	} {
		if got := FlashBlock(c.t); got != c.want {
			t.Errorf("FlashBlock(%d) = %d, want %d", c.t, got, c.want)
		}
		if n := (c.t + FlashBlock(c.t) - 1) / FlashBlock(c.t); n > 32 {
			t.Errorf("FlashBlock(%d) gives %d blocks, more than 32", c.t, n)
		}
	}
}

// TestFlashCausalErrors checks that bad shapes and blocks panic with errors naming them.
func TestFlashCausalErrors(t *testing.T) {
	g := NewGraph(testBackend(t), "flash_errors")
	p := func(name string, dims ...int) *Node { return Parameter(g, name, shapes.Make(dtypes.Float32, dims...)) }
	q := p("q", 1, 2, 6, 4)
	for _, c := range []struct {
		name string
		fn   func()
		want string
	}{
		{"rank", func() { FlashCausal(p("q3", 2, 6, 4), q, q) }, "attention.FlashCausal: q shape (Float32)[2, 6, 4]: rank must be 4, got 3"},
		{"k", func() { FlashCausal(q, p("k", 1, 2, 5, 4), q) }, "attention.FlashCausal: k shape (Float32)[1, 2, 5, 4] must equal q shape (Float32)[1, 2, 6, 4], `[B, H, T, hd]`"},
		{"v", func() { FlashCausal(q, q, p("v", 1, 2, 6, 3)) }, "attention.FlashCausal: v shape (Float32)[1, 2, 6, 3] must equal q shape (Float32)[1, 2, 6, 4], `[B, H, T, hd]`"},
		{"block", func() { FlashCausalBlock(q, q, q, 0) }, "attention.FlashCausalBlock: block must be > 0, got 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, c.name, Catch(c.fn), c.want)
		})
	}
}

// TestFlashChains pins how many query blocks FlashCausal lets run at once: as many as fit in
// 512 MiB of tiles (three `[B, H, block, block]` float32 tensors each), at least 2·GOMAXPROCS.
func TestFlashChains(t *testing.T) {
	g := NewGraph(testBackend(t), "flash_chains")
	floor := 2 * runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		dims          []int
		block, chains int
	}{
		{[]int{8, 12, 1024, 64}, 128, max(floor, 28)},  // GPT-2's size: 18 MiB per tile
		{[]int{1, 12, 16384, 64}, 512, max(floor, 14)}, // 36 MiB per tile
		{[]int{1, 12, 32768, 64}, 1024, max(floor, 3)}, // 144 MiB per tile
		{[]int{1, 1, 6, 2}, 128, 512 << 20 / (3 * 6 * 6 * 4)},
	} {
		q := Parameter(g, fmt.Sprint(c.dims), shapes.Make(dtypes.Float32, c.dims...))
		if got := flashChains(q, c.block); got != c.chains {
			t.Errorf("flashChains(%v, %d) = %d, want %d", c.dims, c.block, got, c.chains)
		}
	}
}
