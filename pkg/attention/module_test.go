package attention

import (
	"math"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// TestForwardCompiledOncePerShape checks that Forward builds one graph per input shape (and
// per mode: training draws masks, evaluation does not) and reuses it, and that every training
// call draws new masks.
func TestForwardCompiledOncePerShape(t *testing.T) {
	g := torchrand.New(9)
	m := NewMultiHeadAttention(g, 4, 4, 8, 0.5, 2, false)
	x := g.Rand(2, 5, 4)
	first := m.Forward(x)
	second := m.Forward(x)
	m.Forward(x)
	if m.builds != 1 {
		t.Errorf("3 training calls on one shape built %d graphs, want 1", m.builds)
	}
	if dimsEqual(f32sToInts(flat(first)), f32sToInts(flat(second))) {
		t.Errorf("two training calls gave the same output: the dropout masks were not redrawn")
	}
	m.Eval()
	e1, e2 := m.Forward(x), m.Forward(x)
	assertClose(t, "eval calls", e1, e2, 0)
	m.Forward(g.Rand(1, 8, 4))
	if m.builds != 3 {
		t.Errorf("training, evaluation and a new shape built %d graphs, want 3", m.builds)
	}
	if w, d := m.LastWeights(); w == nil || d != w || !dimsEqual(w.Shape().Dimensions, []int{1, 2, 8, 8}) {
		t.Errorf("LastWeights after an evaluation call = %v, %v; want one [1 2 8 8] tensor twice", w, d)
	}
	m.RecordWeights(false)
	m.Forward(x)
	if w, _ := m.LastWeights(); w != nil {
		t.Errorf("LastWeights with RecordWeights(false) = %v, want nil", w)
	}
}

// TestParamNames checks the PyTorch named_parameters() order of every module.
func TestParamNames(t *testing.T) {
	g := torchrand.New(0)
	for _, c := range []struct {
		m    interface{ ParamNames() []string }
		want []string
	}{
		{NewSelfAttentionV1(g, 3, 2), []string{"W_query", "W_key", "W_value"}},
		{NewSelfAttentionV2(g, 3, 2, true), []string{"W_query.weight", "W_query.bias", "W_key.weight", "W_key.bias", "W_value.weight", "W_value.bias"}},
		{NewMultiHeadAttention(g, 3, 2, 6, 0, 2, false), []string{"W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight", "out_proj.bias"}},
		{NewMultiHeadAttentionWrapper(g, 3, 2, 6, 0, 2, false), []string{"heads.0.W_query.weight", "heads.0.W_key.weight", "heads.0.W_value.weight",
			"heads.1.W_query.weight", "heads.1.W_key.weight", "heads.1.W_value.weight"}},
		{NewCrossAttention(g, 2, 4, false), []string{"wq.weight", "wk.weight", "wv.weight", "output_projection.weight", "output_projection.bias"}},
		{NewHeadList(g, Config{ContextSize: 4, EmbeddingDim: 4, HeadsNum: 2}), []string{"heads.0.Q_weights.weight", "heads.0.K_weights.weight",
			"heads.0.V_weights.weight", "heads.1.Q_weights.weight", "heads.1.K_weights.weight", "heads.1.V_weights.weight", "linear.weight", "linear.bias"}},
	} {
		got := c.m.ParamNames()
		if len(got) != len(c.want) {
			t.Errorf("ParamNames() = %v, want %v", got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("ParamNames() = %v, want %v", got, c.want)
				break
			}
		}
	}
}

// TestLoadStateDict checks that loading another module's state dict reproduces its outputs.
func TestLoadStateDict(t *testing.T) {
	a := NewMultiHeadAttention(torchrand.New(1), 3, 4, 6, 0, 2, true)
	b := NewMultiHeadAttention(torchrand.New(2), 3, 4, 6, 0, 2, true)
	x := torchrand.New(3).Rand(2, 6, 3)
	before := b.Forward(x)
	if err := b.LoadStateDict(a.StateDict()); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "after LoadStateDict", b.Forward(x), a.Forward(x), 0)
	if dimsEqual(f32sToInts(flat(before)), f32sToInts(flat(b.Forward(x)))) {
		t.Errorf("LoadStateDict did not change the output")
	}
}

// TestApplyInBiggerModel builds a module into a user graph with its own context: variables
// are created there (named by the PyTorch keys) from the module's values, the output equals
// Forward's (see sameMathTol), and dropout follows ctx.IsTraining with GoMLX's random masks.
func TestApplyInBiggerModel(t *testing.T) {
	g := torchrand.New(4)
	m := NewMultiHeadAttention(g, 4, 8, 16, 0.5, 2, true)
	x := g.Rand(4, 16, 4)
	m.Eval()
	want := m.Forward(x)

	store := model.NewStore()
	got := runCtx(t, store, func(scope *model.Scope, in []*Node) *Node {
		return m.Apply(scope.In("block0"), in[0])
	}, x)
	assertClose(t, "Apply in another context", got, want, sameMathTol(t))
	v := store.GetVariable("/block0/W_query/bias")
	if v == nil {
		t.Fatal("Apply did not create /block0/W_query/bias in the given context")
	}
	assertClose(t, "variable W_query.bias", v.MustValue(), m.Weight("W_query.bias"), 0)

	// Training graph: GoMLX-random masks of 0 and 1/(1-p), about half zeros.
	maskExec, err := model.NewExec(testBackend(t), model.NewStore(), func(scope *model.Scope, in []*Node) []*Node {
		scope.Store().SetTraining(in[0].Graph(), true)
		return m.rngMasks(scope, in)
	})
	if err != nil {
		t.Fatal(err)
	}
	masks, err := maskExec.Call(x)
	if err != nil {
		t.Fatal(err)
	}
	if len(masks) != 1 || !dimsEqual(masks[0].Shape().Dimensions, []int{4, 2, 16, 16}) {
		t.Fatalf("training masks %v, want one [4 2 16 16]", masks)
	}
	zeros := 0
	for _, v := range flat(masks[0]) {
		switch v {
		case 0:
			zeros++
		case 2:
		default:
			t.Fatalf("mask value %v, want 0 or 2", v)
		}
	}
	if frac := float64(zeros) / 2048; frac < 0.4 || frac > 0.6 {
		t.Errorf("%.2f of the mask dropped, want about 0.5", frac)
	}
	trained := runCtx(t, model.NewStore(), func(scope *model.Scope, in []*Node) *Node {
		scope.Store().SetTraining(in[0].Graph(), true)
		return m.Apply(scope, in[0])
	}, x)
	if dimsEqual(f32sToInts(flat(trained)), f32sToInts(flat(want))) {
		t.Errorf("Apply in a training graph applied no dropout")
	}
}

// TestTrainWithAutodiff trains a MultiHeadAttention's variables with GoMLX's autodiff (plain
// gradient descent on a regression target) through Apply on the module's own context: the loss
// falls, and Forward and StateDict see the trained weights.
func TestTrainWithAutodiff(t *testing.T) {
	g := torchrand.New(6)
	m := NewMultiHeadAttention(g, 4, 4, 8, 0, 2, false)
	x := g.Rand(2, 8, 4)
	teacher := NewMultiHeadAttention(g, 4, 4, 8, 0, 2, false)
	teacher.Eval()
	target := teacher.Forward(x) // reachable: same architecture, other weights
	before := m.Weight("W_query.weight")
	loss := func(scope *model.Scope, x, target *Node) *Node {
		return ReduceAllMean(Square(Sub(m.Apply(scope, x), target)))
	}
	step, err := model.NewExec(testBackend(t), m.Store(), func(scope *model.Scope, x, target *Node) *Node {
		// A graph that updates variables is a training graph: GoMLX keeps its variables as
		// parameters (in other graphs the pure-Go backend bakes their values in as constants).
		scope.SetTraining(x.Graph(), true)
		l := loss(scope, x, target)
		var vars []*model.Variable
		for v := range scope.IterVariables() {
			if v.Trainable && v.InUseByGraph(x.Graph()) {
				vars = append(vars, v)
			}
		}
		values := make([]*Node, len(vars))
		for i, v := range vars {
			values[i] = v.NodeValue(x.Graph())
		}
		for i, grad := range Gradient(l, values...) {
			vars[i].SetNodeValue(Sub(values[i], MulScalar(grad, 0.5)))
		}
		return l
	})
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	for range 50 {
		l, err := step.Call1(x, target)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, tensors.ToScalar[float32](l))
	}
	t.Logf("loss %v → %v", losses[0], losses[len(losses)-1])
	if !(losses[len(losses)-1] < 0.5*losses[0]) || math.IsNaN(float64(losses[len(losses)-1])) {
		t.Errorf("loss went %v → %v in 50 steps; want it halved", losses[0], losses[len(losses)-1])
	}
	after := m.Weight("W_query.weight")
	if dimsEqual(f32sToInts(flat(before)), f32sToInts(flat(after))) {
		t.Errorf("training did not change W_query.weight")
	}
	// Forward runs on the same variables: its loss is the trained one.
	out, tg := flat(m.Forward(x)), flat(target)
	mse := 0.0
	for i := range out {
		mse += float64((out[i] - tg[i]) * (out[i] - tg[i]))
	}
	mse /= float64(len(out))
	if mse > float64(losses[len(losses)-1])*1.01 {
		t.Errorf("Forward after training has loss %v, the last step had %v", mse, losses[len(losses)-1])
	}
}

// TestMultiHeadAttentionFast checks SetFast(true) against the PyTorch-exact graph: same
// outputs and weights to float32 rounding, with and without bias, dropout and full context,
// and the same dropout masks drawn.
func TestMultiHeadAttentionFast(t *testing.T) {
	for _, c := range []struct {
		dIn, dOut, ctxLen, heads int
		p                        float64
		bias                     bool
		b, tokens                int
	}{
		{6, 6, 3, 2, 0.1, false, 1, 3},
		{5, 8, 7, 4, 0.25, true, 3, 6},
		{16, 32, 40, 4, 0, true, 2, 33},
		{8, 16, 300, 2, 0.2, false, 2, 260}, // three query blocks: 128, 128, 4
	} {
		exact := NewMultiHeadAttention(torchrand.New(8), c.dIn, c.dOut, c.ctxLen, c.p, c.heads, c.bias)
		fast := NewMultiHeadAttention(torchrand.New(8), c.dIn, c.dOut, c.ctxLen, c.p, c.heads, c.bias)
		fast.SetFast(true)
		x := torchrand.New(9).Rand(c.b, c.tokens, c.dIn)
		for _, training := range []bool{true, false} {
			if !training {
				exact.Eval()
				fast.Eval()
			}
			assertClose(t, "fast output", fast.Forward(x), exact.Forward(x), 2e-6)
			fw, fd := fast.LastWeights()
			ew, ed := exact.LastWeights()
			assertClose(t, "fast weights", fw, ew, 2e-6)
			assertClose(t, "fast dropped weights", fd, ed, 2e-6)
		}
	}
}
