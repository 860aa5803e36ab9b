package attention

import (
	"container/list"
	"fmt"
	"strings"
	"sync"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Module is what every attention module shares, like PyTorch's nn.Module: its parameters (GoMLX
// variables named by their PyTorch state_dict keys), the training flag, the generator that
// draws its dropout masks, the compiled graphs of Forward and the attention weights of the
// last call. It is embedded in each module; its zero value is not usable.
type Module struct {
	kind     string               // the PyTorch class, for messages: "MultiHeadAttention"
	gen      *torchrand.Generator // PyTorch's global generator: dropout masks at call time
	store    *model.Store         // the module's own variables
	keys     []string             // parameter keys in PyTorch's named_parameters() order
	shapes   map[string]shapes.Shape
	p        float64 // dropout probability (0: none)
	training bool
	record   bool

	// build is the module's forward pass over data inputs followed by dropout masks (none in
	// evaluation); it returns the output, the attention weights and the weights after dropout.
	// variant tells graphs of one module apart that differ for equal input shapes (CrossAttention's
	// causal flag).
	build func(scope *model.Scope, inputs []*Node, variant int) (out, weights, dropped *Node)
	// nData is the number of data inputs of build (1, or 3 for CrossAttention).
	nData int
	// maskDims lists the dims of the dropout masks a forward pass draws, in PyTorch's order,
	// for data inputs of the given dims; nil when the module has no dropout.
	maskDims func(data [][]int) [][]int

	mu                       sync.Mutex
	graphs                   graphCache // compiled forward passes, one per input shapes and kind
	builds                   int        // graphs built by Forward/Call (one per input shape and kind)
	lastWeights, lastDropped *tensors.Tensor
}

// maxGraphs is how many compiled forward passes (one per input shapes, record flag and
// variant) a module keeps; beyond it the least recently used one is released. 1024 covers
// token-by-token generation over GPT-2's whole context (T = 1…1024) without recompiling on the
// next pass. A var for the tests.
var maxGraphs = 1024

// graphKey identifies one compiled forward pass of a module.
type graphKey struct {
	record  bool
	variant int
	dims    string // the data inputs' dimensions, e.g. "[1 33 3]"
}

// graphCache is a least-recently-used cache of compiled forward passes: GoMLX's Exec keeps at
// most 32 input shapes per Exec and then fails ("maximum cache size of 32 reached"), so the
// module keeps one Exec per input shape itself and releases the least recently used one.
//
// Evaluation graphs hold the weights they were compiled with (see backend.Weights): the cache
// belongs to one set of weights, and forgets every graph when they change.
type graphCache struct {
	execs   map[graphKey]*list.Element // of *graphEntry
	order   list.List                  // most recently used first
	weights backend.Weights            // the values the graphs were compiled with
}

// forWeights empties the cache unless its graphs were compiled with w.
func (c *graphCache) forWeights(w backend.Weights) {
	if c.weights.Same(w) {
		return
	}
	for el := c.order.Front(); el != nil; el = el.Next() {
		el.Value.(*graphEntry).exec.Finalize()
	}
	c.order.Init()
	clear(c.execs)
	c.weights = w
}

type graphEntry struct {
	key  graphKey
	exec *model.Exec
}

// get returns the Exec of key (marking it most recently used), or nil.
func (c *graphCache) get(key graphKey) *model.Exec {
	if el, ok := c.execs[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*graphEntry).exec
	}
	return nil
}

// put adds exec under key and releases the least recently used Execs beyond maxGraphs.
func (c *graphCache) put(key graphKey, exec *model.Exec) {
	if c.execs == nil {
		c.execs = map[graphKey]*list.Element{}
	}
	c.execs[key] = c.order.PushFront(&graphEntry{key, exec})
	for c.order.Len() > max(maxGraphs, 1) {
		old := c.order.Back()
		c.order.Remove(old)
		e := old.Value.(*graphEntry)
		delete(c.execs, e.key)
		e.exec.Finalize()
	}
}

// len is the number of compiled forward passes kept.
func (c *graphCache) len() int { return c.order.Len() }

// newModule starts a module of the given PyTorch class with dropout probability p, which must
// lie in [0, 1].
func newModule(kind string, g *torchrand.Generator, p float64) Module {
	fn := "New" + kind
	if g == nil {
		argPanic(fn, "g", "must be a *torchrand.Generator (torchrand.New(seed)), got nil")
	}
	if !(p >= 0 && p <= 1) { // also catches NaN
		argPanic(fn, "dropout", "must be in [0, 1], got %v", p)
	}
	return Module{kind: kind, gen: g, store: model.NewStore(), shapes: map[string]shapes.Shape{},
		p: p, training: true, record: true, nData: 1}
}

// addParam registers a parameter under its PyTorch key and stores value in a variable.
func (m *Module) addParam(key string, value *tensors.Tensor) {
	m.keys = append(m.keys, key)
	m.shapes[key] = value.Shape()
	if _, err := m.store.CreateVariable(varPath(m.store.RootScope(), key), value); err != nil {
		panic(err)
	}
}

// varPath maps a PyTorch key "heads.0.W_query.weight" to the variable path
// "<scope>/heads/0/W_query/weight" under scope.
func varPath(scope *model.Scope, key string) string {
	return model.JoinPath(append([]string{scope.Scope()}, strings.Split(key, ".")...)...)
}

// variable returns the variable of key under scope (nil: the module's own store), creating it
// with a copy of the module's current value if scope's store does not have it yet.
func (m *Module) variable(scope *model.Scope, key string) *model.Variable {
	if scope == nil {
		scope = m.store.RootScope()
	}
	path := varPath(scope, key)
	if v := scope.Store().GetVariable(path); v != nil {
		if !v.Shape().Equal(m.shapes[key]) {
			argPanic(m.kind+".Apply", "scope", "variable %q has shape %s, want %s", path, v.Shape(), m.shapes[key])
		}
		return v
	}
	return scope.Store().VariableWithValue(path, m.Weight(key))
}

// param is the graph value of the parameter key, read under scope (see variable).
func (m *Module) param(scope *model.Scope, g *Graph, key string) *Node {
	return m.variable(scope, key).NodeValue(g)
}

// optParam is param, or nil when the module has no such parameter (a bias switched off).
func (m *Module) optParam(scope *model.Scope, g *Graph, key string) *Node {
	if _, ok := m.shapes[key]; !ok {
		return nil
	}
	return m.param(scope, g, key)
}

// Store is the GoMLX model store holding the module's variables (paths follow the PyTorch keys:
// "W_query.weight" is variable "/W_query/weight"). Pass Store().RootScope() to Apply to build the
// module into a bigger model that trains these very variables.
func (m *Module) Store() *model.Store { return m.store }

// Train puts the module in training mode (the default, as in PyTorch): Forward applies dropout
// with masks drawn from the module's generator at call time.
func (m *Module) Train() { m.mu.Lock(); m.training = true; m.mu.Unlock() }

// Eval puts the module in evaluation mode: no dropout, nothing drawn.
func (m *Module) Eval() { m.mu.Lock(); m.training = false; m.mu.Unlock() }

// Training reports whether the module is in training mode.
func (m *Module) Training() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.training }

// DropoutRate is the module's dropout probability p.
func (m *Module) DropoutRate() float64 { return m.p }

// RecordWeights sets whether Forward keeps the attention weights of its last call for
// LastWeights (default true). Switching it off saves memory and time on big inputs.
func (m *Module) RecordWeights(record bool) { m.mu.Lock(); m.record = record; m.mu.Unlock() }

// LastWeights returns the attention weights of the last Forward or Call, before and after
// dropout (the same tensor when no dropout was applied): `[B, H, Tq, Tk]` for the multi-head
// modules (heads stacked on axis 1, also for the head-list ones), `[B, T, T]` for
// CausalAttention and Head, `[T, T]` for the self-attention v1/v2. Nil before the first call
// or when RecordWeights is off.
func (m *Module) LastWeights() (weights, dropped *tensors.Tensor) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lastWeights, m.lastDropped
}

// ParamNames lists the parameter keys in PyTorch's named_parameters() order, e.g.
// "W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight", "out_proj.bias".
// Buffers (the causal mask) are not parameters: masks are computed in the graph.
func (m *Module) ParamNames() []string { return append([]string(nil), m.keys...) }

// Weight returns a copy of the current value of the parameter key, in PyTorch's layout (a
// Linear weight is `[out, in]`). It panics with an *ArgumentError for an unknown key.
func (m *Module) Weight(key string) *tensors.Tensor {
	if _, ok := m.shapes[key]; !ok {
		argPanic(m.kind+".Weight", "key", "%q is not a parameter; have %s", key, strings.Join(m.keys, ", "))
	}
	value, err := m.store.GetVariable(varPath(m.store.RootScope(), key)).Value()
	if err != nil {
		panic(err)
	}
	return tensors.FromFlatDataAndDimensions(tensors.MustCopyFlatData[float32](value), value.Shape().Dimensions...)
}

// StateDict returns copies of all parameters by PyTorch key, as module.state_dict() without
// the buffers.
func (m *Module) StateDict() map[string]*tensors.Tensor {
	sd := make(map[string]*tensors.Tensor, len(m.keys))
	for _, k := range m.keys {
		sd[k] = m.Weight(k)
	}
	return sd
}

// LoadStateDict sets the parameters from tensors keyed like StateDict (float32, PyTorch
// layout), as module.load_state_dict(sd): every key must be present with its shape, and no
// other key may be given. The module's store is updated; graphs compiled before see the new
// values.
func (m *Module) LoadStateDict(sd map[string]*tensors.Tensor) error {
	fn := m.kind + ".LoadStateDict"
	for k := range sd {
		if _, ok := m.shapes[k]; !ok {
			return argErr(fn, "sd", "has unexpected key %q; want %s", k, strings.Join(m.keys, ", "))
		}
	}
	for _, k := range m.keys {
		t, ok := sd[k]
		if !ok || t == nil {
			return argErr(fn, "sd", "misses key %q", k)
		}
		if !t.Shape().Equal(m.shapes[k]) {
			return argErr(fn, "sd", "key %q has shape %s, want %s", k, t.Shape(), m.shapes[k])
		}
	}
	for _, k := range m.keys {
		t := sd[k]
		v := m.store.GetVariable(varPath(m.store.RootScope(), k))
		c := tensors.FromFlatDataAndDimensions(tensors.MustCopyFlatData[float32](t), t.Shape().Dimensions...)
		if err := v.SetValue(c); err != nil {
			return err
		}
	}
	return nil
}

// NumParams is the number of learnable scalars, sum(p.numel() for p in module.parameters()):
// 2,360,064 for the GPT-2-size MultiHeadAttention(768, 768, 1024, 0.0, 12).
func (m *Module) NumParams() int {
	n := 0
	for _, k := range m.keys {
		n += m.shapes[k].Size()
	}
	return n
}

// String is a PyTorch-like summary: the class and its parameters with their shapes.
func (m *Module) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s(dropout=%g, training=%v, params=%d)", m.kind, m.p, m.Training(), m.NumParams())
	for _, k := range m.keys {
		fmt.Fprintf(&sb, "\n  %s %v", k, m.shapes[k].Dimensions)
	}
	return sb.String()
}

// drawMasks draws, in PyTorch's order, the dropout masks of one training-mode forward pass on
// data inputs of the given dims; nil in evaluation or without dropout.
func (m *Module) drawMasks(data [][]int) []*tensors.Tensor {
	if !m.training || m.p == 0 || m.maskDims == nil {
		return nil
	}
	var masks []*tensors.Tensor
	for _, dims := range m.maskDims(data) {
		masks = append(masks, m.gen.DropoutMask(m.p, dims...))
	}
	return masks
}

// rngMasks builds dropout masks in the graph from GoMLX's random generator (the store's RNG
// state), for Apply in a training graph (scope.IsTraining(g)); nil otherwise. They are not PyTorch's
// masks: PyTorch's exact masks come from the module's generator through Forward or
// ApplyWithMasks.
func (m *Module) rngMasks(scope *model.Scope, data []*Node) []*Node {
	if scope == nil {
		scope = m.store.RootScope()
	}
	g := data[0].Graph()
	if m.p == 0 || m.maskDims == nil || !scope.IsTraining(g) {
		return nil
	}
	dims := make([][]int, len(data))
	for i, x := range data {
		dims[i] = x.Shape().Dimensions
	}
	var masks []*Node
	for _, d := range m.maskDims(dims) {
		u := scope.RandomUniform(g, shapes.Make(dtypes.Float32, d...))
		keep := GreaterOrEqual(u, Scalar(g, dtypes.Float32, m.p))
		scale := float32(1) / float32(1-m.p)
		masks = append(masks, Where(keep, Scalar(g, dtypes.Float32, scale), ScalarZero(g, dtypes.Float32)))
	}
	return masks
}

// checkMasks panics unless masks is empty or holds exactly the masks maskDims asks for.
func (m *Module) checkMasks(fn string, data []*Node, masks []*Node) {
	if len(masks) == 0 {
		return
	}
	var want [][]int
	if m.maskDims != nil {
		dims := make([][]int, len(data))
		for i, x := range data {
			dims[i] = x.Shape().Dimensions
		}
		want = m.maskDims(dims)
	}
	if len(masks) != len(want) {
		argPanic(fn, "masks", "got %d dropout masks, want %d of dims %v", len(masks), len(want), want)
	}
	for i, mk := range masks {
		if mk == nil || mk.DType() != dtypes.Float32 || !dimsEqual(mk.Shape().Dimensions, want[i]) {
			argPanic(fn, fmt.Sprintf("masks[%d]", i), "shape %v does not match: want %s", shapeOf(mk), shapes.Make(dtypes.Float32, want[i]...))
		}
	}
}

// call runs the module on data tensors: it validates their shapes with check (before drawing
// anything, so an error leaves the generator untouched), draws the dropout masks and executes
// the compiled graph for these shapes.
func (m *Module) call(variant int, check func(dims [][]int), data ...*tensors.Tensor) (out *tensors.Tensor, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dims := make([][]int, len(data))
	err = Catch(func() {
		for i, t := range data {
			if t == nil {
				argPanic(m.kind+".Call", "x", "must not be nil")
			}
			if t.DType() != dtypes.Float32 {
				argPanic(m.kind+".Call", "x", "shape %s: must be Float32", t.Shape())
			}
			dims[i] = t.Shape().Dimensions
		}
		check(dims)
	})
	if err != nil {
		return nil, err
	}
	be, err := backend.Default()
	if err != nil {
		return nil, err
	}
	key := graphKey{record: m.record, variant: variant, dims: fmt.Sprint(dims)}
	m.graphs.forWeights(backend.WeightsOf(m.store))
	exec := m.graphs.get(key)
	if exec == nil {
		record := m.record
		build := m.build
		fn := func(scope *model.Scope, inputs []*Node) []*Node {
			m.builds++ // under m.mu: Exec builds graphs inside call
			out, w, d := build(scope, inputs, variant)
			switch {
			case !record || w == nil:
				return []*Node{out}
			case d == nil || d == w:
				return []*Node{out, w}
			default:
				return []*Node{out, w, d}
			}
		}
		e, err := model.NewExec(be, m.store, fn)
		if err != nil {
			return nil, err
		}
		exec = e.WithName(m.kind)
		m.graphs.put(key, exec)
	}
	args := make([]any, 0, len(data)+2)
	for _, t := range data {
		args = append(args, t)
	}
	for _, mk := range m.drawMasks(dims) {
		args = append(args, mk)
	}
	outs, err := exec.Call(args...)
	if err != nil {
		return nil, err
	}
	m.lastWeights, m.lastDropped = nil, nil
	if len(outs) > 1 {
		m.lastWeights, m.lastDropped = outs[1], outs[1]
	}
	if len(outs) > 2 {
		m.lastDropped = outs[2]
	}
	return outs[0], nil
}

// mustCall is call that panics with its error, for Forward.
func mustCall(out *tensors.Tensor, err error) *tensors.Tensor {
	if err != nil {
		panic(err)
	}
	return out
}

// splitInputs separates the data inputs of build from the dropout masks.
func (m *Module) splitInputs(inputs []*Node) (data, masks []*Node) {
	return inputs[:m.nData], inputs[m.nData:]
}

// checkPositive panics unless every value is > 0.
func checkPositive(fn string, names []string, values ...int) {
	for i, v := range values {
		if v <= 0 {
			argPanic(fn, names[i], "must be > 0, got %d", v)
		}
	}
}
