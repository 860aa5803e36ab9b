package mhabench

import (
	"fmt"
	"math"
	"time"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Mode is what a timed run computes.
type Mode string

const (
	// Forward is the output alone (and its sum, read back to wait for the result).
	Forward Mode = "forward"
	// Backward is forward + backward: graph.Gradient of the sum of the outputs with respect to
	// the input and every weight (read back: the sum).
	Backward Mode = "backward"
)

// Label is how tables name the mode: "forward" or "fwd+bwd".
func (m Mode) Label() string {
	if m == Backward {
		return "fwd+bwd"
	}
	return string(m)
}

// Program is one formulation compiled for one backend and mode, with its weights loaded.
type Program struct {
	Impl    Impl
	Mode    Mode
	Size    Size
	backend compute.Backend
	scope   *model.Scope
	exec    *model.Exec
}

// NewProgram loads w into a fresh context in im's layout and prepares (but does not yet
// compile: GoMLX compiles on the first Run) the graph of mode on backend b.
func NewProgram(b compute.Backend, im Impl, mode Mode, w Weights, s Size) (p *Program, err error) {
	defer catch(&err, "%s %s", im.Name, mode)
	scope := model.New()
	im.Load(scope, w, s)
	p = &Program{Impl: im, Mode: mode, Size: s, backend: b, scope: scope}
	heads := s.Heads
	var fn func(scope *model.Scope, x *Node) []*Node
	switch mode {
	case Forward:
		fn = func(scope *model.Scope, x *Node) []*Node {
			out := im.Build(scope, x, heads) // [B, T, d]
			return []*Node{out, ReduceAllSum(out)}
		}
	case Backward:
		fn = func(scope *model.Scope, x *Node) []*Node {
			out := im.Build(scope, x, heads) // [B, T, d]
			loss := ReduceAllSum(out)
			wrt := []*Node{x}
			for v := range scope.IterVariables() {
				wrt = append(wrt, v.NodeValue(x.Graph()))
			}
			return append(Gradient(loss, wrt...), loss)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	p.exec, err = model.NewExecAny(b, scope, fn)
	return p, err
}

// Run executes the program once on x and returns all outputs: for Forward the output `[B, T, d]`
// and its sum; for Backward the gradients (input first, then the weights in Load's order) and the
// sum. The sum is read back before Run returns, so the computation is finished. The caller owns
// the outputs (FinalizeAll them).
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
	if p.exec != nil {
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
