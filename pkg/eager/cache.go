package eager

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// buildFn builds the graph of one eager operation from its parameters.
type buildFn func(xs []*graph.Node) []*graph.Node

// cacheEntry holds one compiled operation: built and compiled once, then run many times.
type cacheEntry struct {
	once sync.Once
	exec *graph.Exec
	err  error
}

var (
	// opCache maps "op(static args)|shape;shape" to its *cacheEntry.
	opCache sync.Map
	// fnCache maps a graph function's identity (see Apply) to its *cacheEntry; graph.Exec keeps one
	// compiled graph per input shapes under it.
	fnCache sync.Map
)

// CacheSize returns how many compiled operations the process holds: one per (operation, static
// arguments, input shapes and dtypes) for the built-in operations, plus one per graph function
// given to Apply or ApplyNamed (each of which may hold several compiled shapes).
func CacheSize() int {
	n := 0
	count := func(_, _ any) bool { n++; return true }
	opCache.Range(count)
	fnCache.Range(count)
	return n
}

// run executes the operation op (with its static arguments already folded into static) on inputs,
// compiling build once per (op, static, input shapes) and caching the result in the process.
// Inputs must have been validated: a failure here is a bug and is reported as such.
func run(op, static string, build buildFn, inputs ...*tensors.Tensor) []*tensors.Tensor {
	buf := make([]byte, 0, len(op)+len(static)+24*len(inputs))
	buf = append(append(append(append(buf, op...), '('), static...), ')')
	args := make([]any, len(inputs))
	for i, t := range inputs {
		shape := t.Shape()
		buf = append(append(buf, '|'), shape.DType.String()...)
		for _, d := range shape.Dimensions {
			buf = strconv.AppendInt(append(buf, ' '), int64(d), 10)
		}
		args[i] = t
	}
	key := string(buf)
	v, ok := opCache.Load(key)
	if !ok {
		v, _ = opCache.LoadOrStore(key, &cacheEntry{})
	}
	e := v.(*cacheEntry)
	e.once.Do(func() {
		be, err := backend.Default()
		if err != nil {
			e.err = err
			return
		}
		e.exec, e.err = graph.NewExec(be, func(xs []*graph.Node) []*graph.Node { return build(xs) })
		if e.err == nil {
			e.exec.WithName("eager." + op)
		}
	})
	if e.err != nil {
		panic(fmt.Errorf("eager.%s: %w", op, e.err))
	}
	outs, err := e.exec.Exec(args...)
	if err != nil {
		panic(fmt.Errorf("eager.%s: internal error running %s: %w", op, key, err))
	}
	return outs
}

// run1 is run for operations with exactly one output.
func run1(op, static string, build func(xs []*graph.Node) *graph.Node, inputs ...*tensors.Tensor) *tensors.Tensor {
	return run(op, static, func(xs []*graph.Node) []*graph.Node { return []*graph.Node{build(xs)} }, inputs...)[0]
}

var (
	nodeType      = reflect.TypeOf((*graph.Node)(nil))
	nodeSliceType = reflect.TypeOf([]*graph.Node(nil))
)

// Apply runs any GoMLX graph function eagerly on tensors and returns its outputs, so a notebook
// cell can call, for instance, pkg/attention's graph functions on the tensors of the cell before.
//
// fn must be a func taking one *graph.Node per input (or a single []*graph.Node receiving all
// inputs) and returning one *graph.Node, several *graph.Node, or a []*graph.Node.
//
// Caching: the compiled graph is keyed by the identity of the function value fn plus the shapes
// and dtypes of inputs (graph.Exec keeps one compiled graph per input shapes). The identity is the
// Go func value itself, not only its code pointer (reflect's Value.Pointer): two closures built
// from the same func literal share code but may capture different values, so keying by code would
// silently reuse the first closure's graph. Consequently:
//
//   - top-level functions and method expressions (attention.Scores, T.Method) compile once per
//     input shapes for the whole process;
//   - a closure or method value (x.Method) compiles once per closure value: create it once,
//     outside the loop, and pass the same value on every call. A fresh closure per call is
//     correct but recompiles (and is kept) every time: use ApplyNamed to share one compilation.
//
// Apply keeps fn alive for the life of the process (that is what makes its identity a safe key).
// Errors from fn while building the graph (GoMLX panics) come back as a panic with an error that
// names eager.Apply, fn and the input shapes.
func Apply(fn any, inputs ...*tensors.Tensor) []*tensors.Tensor {
	checkFn("Apply", fn, inputs)
	key := fmt.Sprintf("%p|%s", funcIdentity(fn), reflect.TypeOf(fn))
	return applyKeyed("Apply", key, fn, inputs)
}

// ApplyNamed is Apply keyed by name instead of fn's identity: every call with the same name reuses
// the graphs compiled by the first fn given under that name (per input shapes), whatever fn is
// passed later. Use it for closures created anew on every call whose captured values never change
// the computation, e.g. a name that spells out the captured configuration:
//
//	eager.ApplyNamed(fmt.Sprintf("mha(heads=%d)", h), func(x *graph.Node) *graph.Node { … h … }, x)
func ApplyNamed(name string, fn any, inputs ...*tensors.Tensor) []*tensors.Tensor {
	checkFn("ApplyNamed", fn, inputs)
	return applyKeyed("ApplyNamed", "name:"+name+"|"+reflect.TypeOf(fn).String(), fn, inputs)
}

func applyKeyed(op, key string, fn any, inputs []*tensors.Tensor) []*tensors.Tensor {
	v, ok := fnCache.Load(key)
	if !ok {
		v, _ = fnCache.LoadOrStore(key, &cacheEntry{})
	}
	e := v.(*cacheEntry)
	e.once.Do(func() {
		be, err := backend.Default()
		if err != nil {
			e.err = err
			return
		}
		e.exec, e.err = graph.NewExecCanonical(be, canonical(fn), -1, -1, false, true, true)
		if e.err == nil {
			e.exec.SetMaxCache(-1)
		}
	})
	if e.err != nil {
		panic(fmt.Errorf("eager.%s: fn %s: %w", op, reflect.TypeOf(fn), e.err))
	}
	args := make([]any, len(inputs))
	for i, t := range inputs {
		args[i] = t
	}
	outs, err := e.exec.Exec(args...)
	if err != nil {
		panic(fmt.Errorf("eager.%s: fn %s on inputs %s: %w", op, reflect.TypeOf(fn), shapeList(inputs), err))
	}
	return outs
}

// checkFn validates Apply's function signature and inputs before GoMLX sees them.
func checkFn(op string, fn any, inputs []*tensors.Tensor) {
	if fn == nil {
		panic(fmt.Errorf("eager.%s: fn is nil", op))
	}
	ft := reflect.TypeOf(fn)
	if ft.Kind() != reflect.Func || reflect.ValueOf(fn).IsNil() {
		panic(fmt.Errorf("eager.%s: fn is a %s, want a func of *graph.Node", op, ft))
	}
	for i, t := range inputs {
		checkTensor(op, fmt.Sprintf("inputs[%d]", i), t)
	}
	if ft.NumIn() == 1 && ft.In(0) == nodeSliceType {
		// All inputs as one slice.
	} else {
		if ft.NumIn() != len(inputs) {
			panic(fmt.Errorf("eager.%s: fn %s takes %d inputs, got %d tensors %s",
				op, ft, ft.NumIn(), len(inputs), shapeList(inputs)))
		}
		for i := range ft.NumIn() {
			if ft.In(i) != nodeType {
				panic(fmt.Errorf("eager.%s: fn %s: parameter %d is %s, want *graph.Node", op, ft, i, ft.In(i)))
			}
		}
	}
	if ft.NumOut() == 0 {
		panic(fmt.Errorf("eager.%s: fn %s returns nothing, want *graph.Node(s) or []*graph.Node", op, ft))
	}
	if len(inputs) == 0 {
		panic(fmt.Errorf("eager.%s: fn %s: no input tensors given", op, ft))
	}
	for i := range ft.NumOut() {
		if out := ft.Out(i); out != nodeType && !(out == nodeSliceType && ft.NumOut() == 1) {
			panic(fmt.Errorf("eager.%s: fn %s: result %d is %s, want *graph.Node", op, ft, i, out))
		}
	}
}

// canonical wraps fn (checked by checkFn) as GoMLX's canonical graph function: all inputs as one
// slice, all outputs as one slice.
func canonical(fn any) graph.CanonicalExecGraphFn {
	fv, ft := reflect.ValueOf(fn), reflect.TypeOf(fn)
	return func(_ *graph.Graph, xs []*graph.Node) []*graph.Node {
		var in []reflect.Value
		if ft.NumIn() == 1 && ft.In(0) == nodeSliceType {
			in = []reflect.Value{reflect.ValueOf(xs)}
		} else {
			in = make([]reflect.Value, len(xs))
			for i, x := range xs {
				in[i] = reflect.ValueOf(x)
			}
		}
		out := fv.Call(in)
		if ft.NumOut() == 1 && ft.Out(0) == nodeSliceType {
			return out[0].Interface().([]*graph.Node)
		}
		nodes := make([]*graph.Node, len(out))
		for i, o := range out {
			nodes[i] = o.Interface().(*graph.Node)
		}
		return nodes
	}
}

// funcIdentity returns the address of fn's func value (its closure record): unique per closure
// value and fixed for top-level functions. A func stored in an interface is pointer-shaped, so the
// interface's data word is that address.
func funcIdentity(fn any) unsafe.Pointer {
	type eface struct{ typ, data unsafe.Pointer }
	return (*eface)(unsafe.Pointer(&fn)).data
}
