package torchrand

import (
	"fmt"

	"github.com/attnbook/attnbook/internal/argerr"
)

// ErrInvalidArgument is matched (errors.Is) by every *ArgumentError this package panics with.
var ErrInvalidArgument = argerr.Sentinel("torchrand")

// ArgumentError is the value this package panics with when a function is called with a bad
// argument. Its message reads "torchrand.<Func>: <Arg> <Problem>", for example
// "torchrand.Dropout: p must be in [0, 1], got NaN". Its Pkg field is "torchrand".
type ArgumentError = argerr.Error

// argPanic panics with an *ArgumentError.
func argPanic(fn, arg, format string, args ...any) {
	argerr.Panic("torchrand", fn, arg, format, args...)
}

// Catch runs fn and returns the *ArgumentError it panicked with, or nil if it returned normally.
// Any other panic is passed on unchanged.
//
//	err := torchrand.Catch(func() { g.Rand(2, -1) })
//	// err.Error() == "torchrand.Rand: dims[1] must be >= 0, got -1"
func Catch(fn func()) error { return argerr.Catch(ErrInvalidArgument, fn) }

// checkDims panics unless every dimension is >= 0 and the tensor can exist: an element count
// that does not overflow, and (at 4 bytes an element, the least any of its tensors takes) no more
// memory than the machine has, so that an impossible size is a clear error rather than a
// fatal out-of-memory crash. It returns the number of elements.
func checkDims(fn string, dims []int) int {
	n := 1
	for i, d := range dims {
		if d < 0 {
			argPanic(fn, fmt.Sprintf("dims[%d]", i), "must be >= 0, got %d", d)
		}
	}
	for _, d := range dims {
		if d == 0 {
			return 0
		}
	}
	for _, d := range dims {
		if n > maxElements/d {
			argPanic(fn, "dims", "%v has too many elements", dims)
		}
		n *= d
	}
	if mem := totalMemory(); mem > 0 && uint64(n) > mem/4 {
		argPanic(fn, "dims", "%v has %d elements, which need at least %.1f GiB: more than this machine's %.1f GiB of memory",
			dims, n, float64(n)*4/(1<<30), float64(mem)/(1<<30))
	}
	return n
}

const maxElements = 1<<62 - 1
