package gpt

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/attnbook/attnbook/internal/argerr"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// ErrInvalidArgument is matched (errors.Is) by every *ArgumentError this package returns or
// panics with.
var ErrInvalidArgument = argerr.Sentinel("gpt")

// ArgumentError is a bad argument to one of this package's functions, returned as the error
// (functions with an error result check their arguments before any graph is built) or, from a
// graph builder (Model.Forward, Loss, AdamW), panicked with. Its message reads
// "gpt.<Func>: <Arg> <Problem>", for example
// "gpt.Model.Logits: tokens[0, 3] = 50 is outside the vocabulary [0, 10)". Its Pkg field is
// "gpt".
type ArgumentError = argerr.Error

// argErr returns an *ArgumentError of this package.
func argErr(fn, arg, format string, args ...any) *ArgumentError {
	return argerr.New("gpt", fn, arg, format, args...)
}

// argPanic panics with an *ArgumentError of this package.
func argPanic(fn, arg, format string, args ...any) {
	argerr.Panic("gpt", fn, arg, format, args...)
}

// maxParams bounds the models this package builds: 2^30 float32 parameters are 4 GiB of weights,
// and training keeps three more copies (gradients and AdamW's two moments).
const maxParams = 1 << 30

// maxLayers bounds Config.NLayer (GPT-3 has 96 blocks): every block is a dozen variables and a
// few hundred graph nodes.
const maxLayers = 1024

// check returns an *ArgumentError naming the first field of c that cannot make a model, as
// argument prefix+field of function fn ("gpt.New: cfg.NHead must be > 0, got 0").
func (c Config) check(fn, prefix string) error {
	f := func(field string) string { return prefix + field }
	switch {
	case c.VocabSize <= 0:
		return argErr(fn, f("VocabSize"), "must be > 0, got %d", c.VocabSize)
	case c.BlockSize <= 0:
		return argErr(fn, f("BlockSize"), "must be > 0, got %d", c.BlockSize)
	case c.NLayer <= 0 || c.NLayer > maxLayers:
		return argErr(fn, f("NLayer"), "must be in [1, %d], got %d", maxLayers, c.NLayer)
	case c.NHead <= 0:
		return argErr(fn, f("NHead"), "must be > 0, got %d", c.NHead)
	case c.NEmbd <= 0 || c.NEmbd%c.NHead != 0:
		return argErr(fn, f("NEmbd"), "must be a positive multiple of NHead (%d), got %d", c.NHead, c.NEmbd)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return argErr(fn, f("Dropout"), "must be in [0, 1), got %g", c.Dropout)
	}
	if n := c.paramsFloat(); n > maxParams {
		return argErr(fn, strings.TrimSuffix(prefix, "."), "%+v would have %.3g parameters, more than the %d (4 GiB of float32 weights) this package builds", c, n, maxParams)
	}
	return nil
}

// paramsFloat is NumParams in float64, which cannot overflow.
func (c Config) paramsFloat() float64 {
	C, V, T, L := float64(c.NEmbd), float64(c.VocabSize), float64(c.BlockSize), float64(c.NLayer)
	return V*C + T*C + L*(12*C*C+13*C) + 2*C
}

// check returns an *ArgumentError naming the first field of t that cannot train, as argument
// prefix+field of function fn.
func (t TrainConfig) check(fn, prefix string) error {
	f := func(field string) string { return prefix + field }
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case t.BatchSize <= 0:
		return argErr(fn, f("BatchSize"), "must be > 0, got %d", t.BatchSize)
	case t.MaxIters < 0:
		return argErr(fn, f("MaxIters"), "must be >= 0, got %d", t.MaxIters)
	case !(t.LearningRate > 0) || !finite(t.LearningRate):
		return argErr(fn, f("LearningRate"), "must be finite and > 0, got %g", t.LearningRate)
	case !(t.MinLR >= 0) || t.MinLR > t.LearningRate:
		return argErr(fn, f("MinLR"), "must be in [0, LearningRate = %g], got %g", t.LearningRate, t.MinLR)
	case t.WarmupIters < 0:
		return argErr(fn, f("WarmupIters"), "must be >= 0, got %d", t.WarmupIters)
	case t.LRDecayIters < t.WarmupIters:
		return argErr(fn, f("LRDecayIters"), "must be >= WarmupIters (%d), got %d", t.WarmupIters, t.LRDecayIters)
	case !(t.WeightDecay >= 0) || !finite(t.WeightDecay):
		return argErr(fn, f("WeightDecay"), "must be finite and >= 0, got %g", t.WeightDecay)
	case !(t.Beta1 >= 0 && t.Beta1 < 1):
		return argErr(fn, f("Beta1"), "must be in [0, 1), got %g", t.Beta1)
	case !(t.Beta2 >= 0 && t.Beta2 < 1):
		return argErr(fn, f("Beta2"), "must be in [0, 1), got %g", t.Beta2)
	case !(t.GradClip >= 0) || !finite(t.GradClip):
		return argErr(fn, f("GradClip"), "must be finite and >= 0 (0: no clipping), got %g", t.GradClip)
	case t.EvalInterval < 0:
		return argErr(fn, f("EvalInterval"), "must be >= 0 (0: only at the end), got %d", t.EvalInterval)
	case t.EvalIters <= 0:
		return argErr(fn, f("EvalIters"), "must be > 0, got %d", t.EvalIters)
	}
	return nil
}

// checkModel returns an *ArgumentError when m is nil (a model whose New or Load error was
// ignored).
func checkModel(m *Model, fn string) error {
	if m == nil {
		return argErr(fn, "m", "is nil: make the model with gpt.New or gpt.Load (and check their error)")
	}
	return nil
}

// checkIDs returns an *ArgumentError for the first id of ids outside the vocabulary.
func (m *Model) checkIDs(fn, arg string, ids []int32) error {
	for i, id := range ids {
		if id < 0 || int(id) >= m.cfg.VocabSize {
			return argErr(fn, fmt.Sprintf("%s[%d]", arg, i), "= %d is outside the vocabulary [0, %d)", id, m.cfg.VocabSize)
		}
	}
	return nil
}

// checkTokens validates tokens `[B, T]` for fn: an integer tensor, 1 ≤ T ≤ BlockSize, every
// value a token id of the vocabulary (PyTorch raises "index out of range in self" for the
// embedding, "Target 50 is out of bounds" for the loss). It returns the ids, flat.
func (m *Model) checkTokens(fn, arg string, t *tensors.Tensor) ([]int64, error) {
	if t == nil {
		return nil, argErr(fn, arg, "must be an integer [B, T] tensor, got nil")
	}
	if t.Rank() != 2 || !t.DType().IsInt() {
		return nil, argErr(fn, arg, "must be an integer [B, T] tensor, got %s", t.Shape())
	}
	dims := t.Shape().Dimensions
	if dims[0] < 1 {
		return nil, argErr(fn, arg, "shape %s has no sequences (B = 0)", t.Shape())
	}
	if T := dims[1]; T < 1 || T > m.cfg.BlockSize {
		return nil, argErr(fn, arg, "shape %s has %d positions, want 1 to the model's block_size %d", t.Shape(), T, m.cfg.BlockSize)
	}
	ids, err := int64s(t)
	if err != nil {
		return nil, argErr(fn, arg, "cannot be read: %v", err)
	}
	for i, id := range ids {
		if id < 0 || id >= int64(m.cfg.VocabSize) {
			return nil, argErr(fn, fmt.Sprintf("%s[%d, %d]", arg, i/dims[1], i%dims[1]), "= %d is outside the vocabulary [0, %d)", id, m.cfg.VocabSize)
		}
	}
	return ids, nil
}

// int64s returns the values of an integer tensor, whatever its dtype.
func int64s(t *tensors.Tensor) (out []int64, err error) {
	conv := func(flat any) {
		switch f := flat.(type) {
		case []int8:
			out = widen(f)
		case []int16:
			out = widen(f)
		case []int32:
			out = widen(f)
		case []int64:
			out = slices.Clone(f)
		case []uint8:
			out = widen(f)
		case []uint16:
			out = widen(f)
		case []uint32:
			out = widen(f)
		case []uint64:
			out = make([]int64, len(f))
			for i, v := range f {
				out[i] = int64(min(v, math.MaxInt64))
			}
		default:
			err = fmt.Errorf("dtype %s is not an integer type this package reads", t.DType())
		}
	}
	if cerr := t.ConstFlatData(conv); cerr != nil {
		return nil, cerr
	}
	return out, err
}

func widen[T int8 | int16 | int32 | uint8 | uint16 | uint32](f []T) []int64 {
	out := make([]int64, len(f))
	for i, v := range f {
		out[i] = int64(v)
	}
	return out
}

// checkGraphTokens panics with an *ArgumentError unless tokens is an integer `[B, T]` node with
// 1 ≤ T ≤ BlockSize (a graph cannot check the values: Logits and BatchLoss do, before building).
func (m *Model) checkGraphTokens(fn string, rank int, dtype dtypes.DType, dims []int, shape fmt.Stringer) {
	if rank != 2 || !dtype.IsInt() {
		argPanic(fn, "tokens", "must be an integer [B, T] node, got %s", shape)
	}
	if T := dims[1]; T < 1 || T > m.cfg.BlockSize {
		argPanic(fn, "tokens", "shape %s has %d positions, want 1 to the model's block_size %d", shape, T, m.cfg.BlockSize)
	}
}

// checkSample returns an *ArgumentError for Generate's first bad argument.
func (m *Model) checkSample(prompt []int32, n int, opts SampleOptions) error {
	const fn = "Model.Generate"
	if err := checkModel(m, fn); err != nil {
		return err
	}
	switch {
	case len(prompt) == 0:
		return argErr(fn, "prompt", "is empty: give at least one token (e.g. the id of \"\\n\")")
	case n < 0:
		return argErr(fn, "n", "must be >= 0, got %d", n)
	case !(opts.Temperature >= 0) || math.IsInf(opts.Temperature, 0):
		return argErr(fn, "opts.Temperature", "must be finite and >= 0 (0: greedy), got %g", opts.Temperature)
	case opts.TopK < 0:
		return argErr(fn, "opts.TopK", "must be >= 0 (0: all tokens), got %d", opts.TopK)
	}
	return m.checkIDs(fn, "prompt", prompt)
}
