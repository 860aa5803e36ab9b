package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/attnbook/attnbook/pkg/benchdata"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Mode is what a timed run computes (see [benchdata.Mode]).
type Mode = benchdata.Mode

// The modes.
const (
	Forward  = benchdata.Forward
	Backward = benchdata.Backward
	Matmul   = benchdata.Matmul
)

// Program is one formulation compiled for one backend and mode, with its weights loaded.
type Program struct {
	Impl Impl
	Mode Mode
	exec *model.Exec
}

// NewProgram loads w into a fresh store in im's layout and prepares the graph of mode on
// backend b (GoMLX compiles it on the first Run). Forward returns the output `[B, T, d]` and its
// sum; Backward returns the gradient of the sum of the outputs with respect to the input
// (first) and every weight, then the sum.
func NewProgram(b compute.Backend, im Impl, mode Mode, w Weights, s Size) (p *Program, err error) {
	defer catch(&err, "%s %s", im.Name, mode)
	store := model.NewStore()
	forward := im.Load(store, w, s)
	var fn func(scope *model.Scope, x *Node) []*Node
	switch mode {
	case Forward:
		fn = func(scope *model.Scope, x *Node) []*Node {
			out := forward(scope, x) // [B, T, d]
			return []*Node{out, ReduceAllSum(out)}
		}
	case Backward:
		fn = func(scope *model.Scope, x *Node) []*Node {
			loss := ReduceAllSum(forward(scope, x))
			wrt := []*Node{x}
			for v := range store.IterVariables() {
				wrt = append(wrt, v.NodeValue(x.Graph()))
			}
			return append(Gradient(loss, wrt...), loss)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	exec, err := model.NewExec(b, store, fn)
	if err != nil {
		return nil, err
	}
	return &Program{Impl: im, Mode: mode, exec: exec}, nil
}

// Run executes the program once on x and returns all its outputs; the last (the sum) is read
// back before Run returns, so the computation has finished. The caller owns the outputs.
func (p *Program) Run(x *tensors.Tensor) (outs []*tensors.Tensor, err error) {
	defer catch(&err, "%s %s", p.Impl.Name, p.Mode)
	outs, err = p.exec.Exec(x)
	if err != nil {
		return nil, err
	}
	if sum := float64(outs[len(outs)-1].Value().(float32)); math.IsNaN(sum) {
		return outs, fmt.Errorf("the sum of the outputs is NaN")
	}
	return outs, nil
}

// Time runs the program once on x and returns the wall time, discarding the outputs.
func (p *Program) Time(x *tensors.Tensor) (time.Duration, error) {
	start := time.Now()
	outs, err := p.Run(x)
	d := time.Since(start)
	release(outs)
	return d, err
}

// Close frees the compiled program.
func (p *Program) Close() {
	if p != nil && p.exec != nil {
		p.exec.Finalize()
	}
}

func release(ts []*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
}

// catch turns a panic (GoMLX reports graph errors by panicking) into *err, prefixed.
func catch(err *error, format string, args ...any) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s: %v", fmt.Sprintf(format, args...), r)
	} else if *err != nil {
		*err = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *err)
	}
}

// RelErr is the normwise relative error max|a-b| / max|b| (0 when both are all zeros), the
// measure the equality checks use: elementwise relative errors blow up where b is near 0.
func RelErr(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var diff, ref float64
	for i := range a {
		if math.IsNaN(float64(a[i])) || math.IsNaN(float64(b[i])) {
			return math.NaN()
		}
		diff = max(diff, math.Abs(float64(a[i])-float64(b[i])))
		ref = max(ref, math.Abs(float64(b[i])))
	}
	if ref == 0 {
		if diff == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return diff / ref
}
