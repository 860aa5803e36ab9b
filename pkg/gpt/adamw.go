package gpt

import (
	"fmt"
	"math"
	"sort"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"
	"github.com/gomlx/gomlx/ml/train/optimizer"
)

// crossEntropy is GoMLX's sparse categorical cross-entropy of logits `[B, T, V]` against targets
// `[B, T]`, already averaged to a scalar.
func crossEntropy(logits, targets *Node) *Node {
	return loss.SparseCategoricalCrossEntropyLogits([]*Node{ExpandAxes(targets, -1)}, []*Node{logits})
}

// adamWScope holds the optimizer's moments ("/adamw/m/<variable path>", ".../v/...").
const adamWScope = "adamw"

// AdamW is torch.optim.AdamW (Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization"),
// as nanoGPT configures it, as a GoMLX optimizer.Interface for train.Trainer:
//
//   - two parameter groups: weight decay on variables of rank ≥ 2 (Linear weights, embeddings),
//     none on rank-1 ones (LayerNorm weights, biases). GoMLX's optimizer.Adam().WeightDecay decays
//     every variable, so it cannot follow nanoGPT here;
//   - the learning rate of step it (0, 1, …; GoMLX's global step − 1) is TrainConfig.LR(it),
//     computed in the graph in float64;
//   - before the update, gradients are scaled by min(1, GradClip/(‖g‖ + 1e-6)), ‖g‖ the norm of
//     all gradients together (torch.nn.utils.clip_grad_norm_);
//   - per variable, in PyTorch 1.13's order of float32 operations: p ← p·(1 − lr·wd);
//     m ← β1·m + (1−β1)·g; v ← β2·v + (1−β2)·g²; p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + 1e-8).
//
// It panics with an *ArgumentError if tc cannot train (TrainConfig.Validate).
func AdamW(tc TrainConfig) optimizer.Interface {
	if err := tc.check("AdamW", "tc."); err != nil {
		panic(err)
	}
	return &adamW{tc: tc}
}

type adamW struct{ tc TrainConfig }

// UpdateGraph implements optimizer.Interface.
func (o *adamW) UpdateGraph(scope *model.Scope, g *Graph, theLoss *Node) {
	if !theLoss.Shape().IsScalar() {
		panic(fmt.Errorf("gpt.AdamW: the loss must be a scalar, got %s", theLoss.Shape()))
	}
	grads := scope.BuildTrainableVariablesGradientsGraph(theLoss)
	var vars []*model.Variable
	for v := range scope.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vars = append(vars, v)
		}
	}
	if len(vars) != len(grads) {
		panic(fmt.Errorf("gpt.AdamW: %d gradients for %d trainable variables", len(grads), len(vars)))
	}
	tc := o.tc

	// Gradient clipping by global norm.
	if tc.GradClip > 0 {
		// Summed in variable-path order, so a store restored from a checkpoint (whose variables
		// come back in another order) rounds the norm the same way.
		order := make([]int, len(vars))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return vars[order[a]].Path() < vars[order[b]].Path() })
		var sumSq *Node
		for _, i := range order {
			s := ReduceAllSum(Square(grads[i]))
			if sumSq == nil {
				sumSq = s
			} else {
				sumSq = Add(sumSq, s)
			}
		}
		total := Sqrt(sumSq)
		coef := MinScalar(Div(Scalar(g, dtypes.Float32, tc.GradClip), AddScalar(total, 1e-6)), 1.0)
		for i := range grads {
			grads[i] = Mul(grads[i], coef)
		}
	}

	// Scalars of this step, in float64 like PyTorch's Python floats, rounded to float32 once.
	step := ConvertDType(optimizer.IncrementGlobalStep(g, dtypes.Int64), dtypes.Float64) // t = 1, 2, …
	lr := lrGraph(tc, AddScalar(step, -1))
	f32 := func(x *Node) *Node { return ConvertDType(x, dtypes.Float32) }
	bc1 := OneMinus(Pow(Scalar(g, dtypes.Float64, tc.Beta1), step))
	bc2Sqrt := Sqrt(OneMinus(Pow(Scalar(g, dtypes.Float64, tc.Beta2), step)))
	stepSize := f32(Div(lr, bc1))
	bc2SqrtF := f32(bc2Sqrt)
	decay := f32(OneMinus(MulScalar(lr, tc.WeightDecay)))
	beta1 := Scalar(g, dtypes.Float32, tc.Beta1)
	beta2 := Scalar(g, dtypes.Float32, tc.Beta2)
	oneMinusBeta1 := Scalar(g, dtypes.Float32, 1-tc.Beta1)
	oneMinusBeta2 := Scalar(g, dtypes.Float32, 1-tc.Beta2)
	eps := Scalar(g, dtypes.Float32, 1e-8)

	for i, v := range vars {
		p := v.NodeValue(g)
		grad := grads[i]
		m, vv := o.moments(scope, v)
		mNode := Add(Mul(m.NodeValue(g), beta1), Mul(grad, oneMinusBeta1))
		vNode := Add(Mul(vv.NodeValue(g), beta2), Mul(Square(grad), oneMinusBeta2))
		m.SetNodeValue(mNode)
		vv.SetNodeValue(vNode)
		if v.Shape().Rank() >= 2 && tc.WeightDecay > 0 {
			p = Mul(p, decay)
		}
		denom := Add(Div(Sqrt(vNode), bc2SqrtF), eps)
		v.SetNodeValue(Sub(p, Mul(stepSize, Div(mNode, denom))))
	}
}

// moments returns (creating them at zero if needed) the first and second moment variables of v.
func (o *adamW) moments(scope *model.Scope, v *model.Variable) (m, vv *model.Variable) {
	store := scope.Store()
	zeros := func(kind string) *model.Variable {
		path := "/" + adamWScope + "/" + kind + v.Path()
		if existing := store.GetVariable(path); existing != nil {
			return existing
		}
		return store.VariableWithValue(path, tensors.FromShape(v.Shape())).SetTrainable(false)
	}
	return zeros("m"), zeros("v")
}

// lrGraph is TrainConfig.LR on a float64 scalar node it.
func lrGraph(tc TrainConfig, it *Node) *Node {
	g := it.Graph()
	c := func(x float64) *Node { return Scalar(g, dtypes.Float64, x) }
	warm := Div(Mul(c(tc.LearningRate), AddScalar(it, 1)), c(float64(tc.WarmupIters+1)))
	span := math.Max(float64(tc.LRDecayIters-tc.WarmupIters), 1)
	ratio := Div(Sub(it, c(float64(tc.WarmupIters))), c(span))
	cosine := Add(c(tc.MinLR), Mul(MulScalar(OnePlus(Cos(MulScalar(ratio, math.Pi))), 0.5), c(tc.LearningRate-tc.MinLR)))
	lr := Where(LessThan(it, c(float64(tc.WarmupIters))), warm, cosine)
	return Where(GreaterThan(it, c(float64(tc.LRDecayIters))), c(tc.MinLR), lr)
}

// Clear implements optimizer.Interface: it deletes the moments.
func (o *adamW) Clear(scope *model.Scope) error {
	return scope.Store().DeleteVariablesInScope("/" + adamWScope)
}
