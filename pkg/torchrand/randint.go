package torchrand

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
)

// FillRandint fills dst like torch.randint(low, high, (len(dst),)): integers uniform in
// [low, high), one at a time in order, each (v mod (high-low)) + low, where v is one Random()
// when high-low < 2^32 and one Random64() (two engine outputs) otherwise — PyTorch's
// random_from_to kernel, which is serial, so the values never depend on the thread count.
// The modulo makes values below 2^32 mod (high-low) slightly more likely, exactly as in PyTorch.
//
// It panics with an *ArgumentError unless low < high (and high-low fits in an int64).
func (g *Generator) FillRandint(dst []int64, low, high int64) {
	checkRandint("FillRandint", low, high)
	g.randint(dst, low, high)
}

// Randint returns torch.randint(low, high, dims): an int64 tensor of shape `dims` with values
// uniform in [low, high), drawn as FillRandint describes. No dims gives a scalar; a zero dimension
// gives an empty tensor and draws nothing. nanoGPT draws its batch offsets this way:
// torch.randint(len(data) - block_size, (batch_size,)) is Randint(0, len(data)-blockSize, batchSize).
//
// It panics with an *ArgumentError unless low < high, or on a negative dimension.
func (g *Generator) Randint(low, high int64, dims ...int) *tensors.Tensor {
	checkRandint("Randint", low, high)
	checkDims("Randint", dims)
	t := tensors.FromShape(shapes.Make(dtypes.Int64, dims...))
	tensors.MustMutableFlatData(t, func(flat []int64) { g.randint(flat, low, high) })
	return t
}

func checkRandint(fn string, low, high int64) {
	if low >= high {
		argPanic(fn, "high", "must be > low, got low=%d, high=%d", low, high)
	}
	if high-low <= 0 { // overflowed int64
		argPanic(fn, "high", "- low must fit in an int64, got low=%d, high=%d", low, high)
	}
}

func (g *Generator) randint(dst []int64, low, high int64) {
	r := uint64(high - low)
	if r >= 1<<32 {
		for i := range dst {
			dst[i] = int64(g.Random64()%r) + low
		}
		return
	}
	for i := range dst {
		dst[i] = int64(uint64(g.Random())%r) + low
	}
}
