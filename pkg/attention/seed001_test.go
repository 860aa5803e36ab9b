package attention

import (
	"strconv"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// fidelityCase is one computation of a seed document: what it prints (if anything) and the
// PyTorch golden it must match.
type fidelityCase struct {
	name    string // golden key ("" if none)
	printed string // the digits the seed prints, row-major ("" if it prints none)
	got     func(t *testing.T) *tensors.Tensor
}

// printedUlps lists the cases whose printed digits may be matched one float32 step away (see
// TestSeed000); all others must print exactly as the seed.
var printedUlps = map[string]int{"s000/walk/masked_scores": 1}

func checkFidelity(t *testing.T, cases []fidelityCase) {
	t.Helper()
	for _, c := range cases {
		label := c.name
		if label == "" {
			label = c.printed
		}
		t.Run(label, func(t *testing.T) {
			got := c.got(t)
			if c.printed != "" {
				assertPrinted(t, label, got, c.printed, printedUlps[c.name])
			}
			if c.name != "" {
				assertGolden(t, c.name, got)
			}
		})
	}
}

// row returns row i of a 2D tensor as a 1D tensor.
func row(t *tensors.Tensor, i int) *tensors.Tensor {
	n := t.Shape().Dim(1)
	return tensors.FromFlatDataAndDimensions(append([]float32(nil), flat(t)[i*n:(i+1)*n]...), n)
}

// TestSeed001 asserts every number seed 001 prints, from the dot products of one query to the
// vectorized MultiHeadAttention, and the goldens behind them.
func TestSeed001(t *testing.T) {
	inputs := golden(t, "s001/inputs")
	query := row(inputs, 1)
	scores2 := func(in []*Node) *Node { return DotScores(in[0], in[1]) }

	g := torchrand.New(123) // cell 12: torch.manual_seed(123); three torch.rand(3, 2)
	wq, wk, wv := g.Rand(3, 2), g.Rand(3, 2), g.Rand(3, 2)
	sa2 := NewSelfAttentionV2(torchrand.New(789), 3, 2, false)
	sa2Scores := func(t *testing.T) *tensors.Tensor { // cell 22: queries @ keys.T of sa_v2
		return runCtx(t, sa2.Store(), func(scope *model.Scope, in []*Node) *Node {
			x := in[0]
			return Scores(sa2.linear(scope, "W_query", x), sa2.linear(scope, "W_key", x))
		}, inputs)
	}
	sa2Weights := func(t *testing.T) *tensors.Tensor {
		return runCtx(t, sa2.Store(), func(scope *model.Scope, in []*Node) *Node {
			_, w := sa2.ApplyWithWeights(scope, in[0])
			return w
		}, inputs)
	}

	checkFidelity(t, []fidelityCase{
		{"s001/attn_scores_2", "0.9544 1.4950 1.4754 0.8434 0.7070 1.0865", func(t *testing.T) *tensors.Tensor {
			return run(t, scores2, query, inputs)
		}},
		{"s001/attn_weights_2_tmp", "0.1455 0.2278 0.2249 0.1285 0.1077 0.1656", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return NaiveNormalize(scores2(in)) }, query, inputs)
		}},
		{"", "1.0000", func(t *testing.T) *tensors.Tensor { // cell 3: Sum
			return run(t, func(in []*Node) *Node { return ReduceAllSum(NaiveNormalize(scores2(in))) }, query, inputs)
		}},
		{"s001/softmax_naive_2", "0.1385 0.2379 0.2333 0.1240 0.1082 0.1581", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return NaiveSoftmax(scores2(in)) }, query, inputs)
		}},
		{"s001/softmax_2", "0.1385 0.2379 0.2333 0.1240 0.1082 0.1581", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return StableSoftmax(scores2(in)) }, query, inputs)
		}},
		{"s001/context_vec_2", "0.4419 0.6515 0.5683", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ContextVectors(NaiveSoftmax(scores2(in)), in[1]) }, query, inputs)
		}},
		{"s001/attn_scores", "0.9995 0.9544 0.9422 0.4753 0.4576 0.6310 0.9544 1.4950 1.4754 0.8434 0.7070 1.0865 0.9422 1.4754 1.4570 0.8296 0.7154 1.0605 0.4753 0.8434 0.8296 0.4937 0.3474 0.6565 0.4576 0.7070 0.7154 0.3474 0.6654 0.2935 0.6310 1.0865 1.0605 0.6565 0.2935 0.9450", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return Scores(in[0], in[0]) }, inputs)
		}},
		{"s001/inputsT_inputs", "1.4561 1.3876 1.2876 1.3876 2.5408 1.9081 1.2876 1.9081 2.0587", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { xt := Transpose(in[0], 0, 1); return Scores(xt, xt) }, inputs)
		}},
		{"s001/attn_weights", "0.2098 0.2006 0.1981 0.1242 0.1220 0.1452 0.1385 0.2379 0.2333 0.1240 0.1082 0.1581 0.1390 0.2369 0.2326 0.1242 0.1108 0.1565 0.1435 0.2074 0.2046 0.1462 0.1263 0.1720 0.1526 0.1958 0.1975 0.1367 0.1879 0.1295 0.1385 0.2184 0.2128 0.1420 0.0988 0.1896", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return StableSoftmax(Scores(in[0], in[0])) }, inputs)
		}},
		{"s001/all_context_vecs", "0.4421 0.5931 0.5790 0.4419 0.6515 0.5683 0.4431 0.6496 0.5671 0.4304 0.6298 0.5510 0.4671 0.5910 0.5266 0.4177 0.6503 0.5645", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ContextVectors(StableSoftmax(Scores(in[0], in[0])), in[0]) }, inputs)
		}},
		// Cells 12–17: trainable weights, torch.rand after seed 123.
		{"s001/rand123/W_query", "0.2961 0.5166 0.2517 0.6886 0.0740 0.8665", func(t *testing.T) *tensors.Tensor { return wq }},
		{"s001/rand123/W_key", "", func(t *testing.T) *tensors.Tensor { return wk }},
		{"s001/rand123/W_value", "", func(t *testing.T) *tensors.Tensor { return wv }},
		{"", "0.2961 0.5166", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ContextVectors(in[0], in[1]) }, tensors.FromValue([]float32{1, 0, 0}), wq)
		}},
		{"", "0.2517 0.6886", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ContextVectors(in[0], in[1]) }, tensors.FromValue([]float32{0, 1, 0}), wq)
		}},
		{"", "0.3701 1.3831", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ContextVectors(in[0], in[1]) }, tensors.FromValue([]float32{1, 0, 1}), wq)
		}},
		{"s001/rand123/query_2", "0.4306 1.4551", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return matmul(in[0], in[1]) }, query, wq)
		}},
		{"s001/rand123/keys", "", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return matmul(in[0], in[1]) }, inputs, wk)
		}},
		{"", "1.8524", func(t *testing.T) *tensors.Tensor { // cell 15: query_2 · keys[1]
			return run(t, func(in []*Node) *Node {
				keys := matmul(in[1], in[3])
				return Squeeze(Slice(DotScores(matmul(in[0], in[2]), keys), AxisElem(1)))
			}, query, inputs, wq, wk)
		}},
		{"s001/rand123/attn_scores_2", "1.2705 1.8524 1.8111 1.0795 0.5577 1.5440", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return DotScores(matmul(in[0], in[2]), matmul(in[1], in[3])) }, query, inputs, wq, wk)
		}},
		{"s001/rand123/all_scores", "0.9231 1.3545 1.3241 0.7910 0.4032 1.1330 1.2705 1.8524 1.8111 1.0795 0.5577 1.5440 1.2544 1.8284 1.7877 1.0654 0.5508 1.5238 0.6973 1.0167 0.9941 0.5925 0.3061 0.8475 0.6114 0.8819 0.8626 0.5121 0.2707 0.7307 0.8995 1.3165 1.2871 0.7682 0.3937 1.0996", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return Scores(matmul(in[0], in[1]), matmul(in[0], in[2])) }, inputs, wq, wk)
		}},
		{"", "0.9231 1.2705 1.2544 0.6973 0.6114 0.8995 1.3545 1.8524 1.8284 1.0167 0.8819 1.3165 1.3241 1.8111 1.7877 0.9941 0.8626 1.2871 0.7910 1.0795 1.0654 0.5925 0.5121 0.7682 0.4032 0.5577 0.5508 0.3061 0.2707 0.3937 1.1330 1.5440 1.5238 0.8475 0.7307 1.0996", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return Scores(matmul(in[0], in[2]), matmul(in[0], in[1])) }, inputs, wq, wk)
		}},
		{"s001/rand123/attn_weights_2", "0.1500 0.2264 0.2199 0.1311 0.0906 0.1820", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node {
				return StableSoftmax(ScaleScores(DotScores(matmul(in[0], in[2]), matmul(in[1], in[3])), 2))
			}, query, inputs, wq, wk)
		}},
		{"s001/rand123/context_vec_2", "0.3061 0.8210", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node {
				w := StableSoftmax(ScaleScores(DotScores(matmul(in[0], in[2]), matmul(in[1], in[3])), 2))
				return ContextVectors(w, matmul(in[1], in[4]))
			}, query, inputs, wq, wk, wv)
		}},
		// Cells 18–21: the two SelfAttention classes.
		{"s001/sa_v1/out", "0.2996 0.8053 0.3061 0.8210 0.3058 0.8203 0.2948 0.7939 0.2927 0.7891 0.2990 0.8040", func(t *testing.T) *tensors.Tensor {
			return NewSelfAttentionV1(torchrand.New(123), 3, 2).Forward(inputs)
		}},
		{"s001/sa_v2/out", "-0.0739 0.0713 -0.0748 0.0703 -0.0749 0.0702 -0.0760 0.0685 -0.0763 0.0679 -0.0754 0.0693", func(t *testing.T) *tensors.Tensor {
			return NewSelfAttentionV2(torchrand.New(789), 3, 2, false).Forward(inputs)
		}},
		{"s001/sa_v2_bias/out", "", func(t *testing.T) *tensors.Tensor {
			return NewSelfAttentionV2(torchrand.New(789), 3, 2, true).Forward(inputs)
		}},
		// Cells 22–49: causal masks, both ways.
		{"s001/causal/scores", "", sa2Scores},
		{"s001/causal/weights", "0.1921 0.1646 0.1652 0.1550 0.1721 0.1510 0.2041 0.1659 0.1662 0.1496 0.1665 0.1477 0.2036 0.1659 0.1662 0.1498 0.1664 0.1480 0.1869 0.1667 0.1668 0.1571 0.1661 0.1564 0.1830 0.1669 0.1670 0.1588 0.1658 0.1585 0.1935 0.1663 0.1666 0.1542 0.1666 0.1529", sa2Weights},
		{"", "1. 0. 0. 0. 0. 0. 1. 1. 0. 0. 0. 0. 1. 1. 1. 0. 0. 0. 1. 1. 1. 1. 0. 0. 1. 1. 1. 1. 1. 0. 1. 1. 1. 1. 1. 1.", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ConvertDType(CausalMask(in[0].Graph(), 6, 6), in[0].DType()) }, inputs)
		}},
		{"", "0. 1. 1. 1. 1. 1. 0. 0. 1. 1. 1. 1. 0. 0. 0. 1. 1. 1. 0. 0. 0. 0. 1. 1. 0. 0. 0. 0. 0. 1. 0. 0. 0. 0. 0. 0.", func(t *testing.T) *tensors.Tensor {
			return run(t, func(in []*Node) *Node { return ConvertDType(FutureMask(in[0].Graph(), 6, 6), in[0].DType()) }, inputs)
		}},
		{"s001/causal/masked_simple", "0.1921 0.0000 0.0000 0.0000 0.0000 0.0000 0.2041 0.1659 0.0000 0.0000 0.0000 0.0000 0.2036 0.1659 0.1662 0.0000 0.0000 0.0000 0.1869 0.1667 0.1668 0.1571 0.0000 0.0000 0.1830 0.1669 0.1670 0.1588 0.1658 0.0000 0.1935 0.1663 0.1666 0.1542 0.1666 0.1529", func(t *testing.T) *tensors.Tensor {
			w := sa2Weights(t)
			return run(t, func(in []*Node) *Node {
				return Mul(in[0], ConvertDType(CausalMask(in[0].Graph(), 6, 6), in[0].DType()))
			}, w)
		}},
		{"s001/causal/masked_simple_norm", "1.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.5517 0.4483 0.0000 0.0000 0.0000 0.0000 0.3800 0.3097 0.3103 0.0000 0.0000 0.0000 0.2758 0.2460 0.2462 0.2319 0.0000 0.0000 0.2175 0.1983 0.1984 0.1888 0.1971 0.0000 0.1935 0.1663 0.1666 0.1542 0.1666 0.1529", func(t *testing.T) *tensors.Tensor {
			w := sa2Weights(t)
			return run(t, func(in []*Node) *Node { return CausalRenormalize(in[0]) }, w)
		}},
		{"s001/causal/masked", "0.2899 -inf -inf -inf -inf -inf 0.4656 0.1723 -inf -inf -inf -inf 0.4594 0.1703 0.1731 -inf -inf -inf 0.2642 0.1024 0.1036 0.0186 -inf -inf 0.2183 0.0874 0.0882 0.0177 0.0786 -inf 0.3408 0.1270 0.1290 0.0198 0.1290 0.0078", func(t *testing.T) *tensors.Tensor {
			s := sa2Scores(t)
			return run(t, func(in []*Node) *Node { return CausalMaskFill(in[0]) }, s)
		}},
		{"s001/causal/masked_weights", "1.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.5517 0.4483 0.0000 0.0000 0.0000 0.0000 0.3800 0.3097 0.3103 0.0000 0.0000 0.0000 0.2758 0.2460 0.2462 0.2319 0.0000 0.0000 0.2175 0.1983 0.1984 0.1888 0.1971 0.0000 0.1935 0.1663 0.1666 0.1542 0.1666 0.1529", func(t *testing.T) *tensors.Tensor {
			s := sa2Scores(t)
			return run(t, func(in []*Node) *Node { return StableSoftmax(ScaleScores(CausalMaskFill(in[0]), 2)) }, s)
		}},
		// Cell 56: dropout on ones, mask drawn after seed 123.
		{"s001/dropout05_ones", "2. 2. 0. 2. 2. 0. 0. 0. 0. 2. 0. 2. 2. 2. 2. 2. 0. 2. 0. 2. 2. 0. 0. 2. 0. 2. 0. 2. 0. 2. 0. 2. 2. 2. 2. 0.", func(t *testing.T) *tensors.Tensor {
			mask := torchrand.New(123).DropoutMask(0.5, 6, 6)
			return run(t, func(in []*Node) *Node { return Dropout(OnesLike(in[0]), in[0]) }, mask)
		}},
		// Cells 67 and 123: the wrapper and the vectorized MultiHeadAttention.
		{"s001/wrapper/out", "-0.4519 0.2216 0.4772 0.1063 -0.5874 0.0058 0.5891 0.3257 -0.6300 -0.0632 0.6202 0.3860 -0.5675 -0.0843 0.5478 0.3589 -0.5526 -0.0981 0.5321 0.3428 -0.5299 -0.1081 0.5077 0.3493 -0.4519 0.2216 0.4772 0.1063 -0.5874 0.0058 0.5891 0.3257 -0.6300 -0.0632 0.6202 0.3860 -0.5675 -0.0843 0.5478 0.3589 -0.5526 -0.0981 0.5321 0.3428 -0.5299 -0.1081 0.5077 0.3493", func(t *testing.T) *tensors.Tensor {
			return NewMultiHeadAttentionWrapper(torchrand.New(123), 3, 2, 6, 0.0, 2, false).Forward(golden(t, "s001/batch"))
		}},
		{"s001/mha/out", "0.3190 0.4858 0.2943 0.3897 0.2856 0.3593 0.2693 0.3873 0.2639 0.3928 0.2575 0.4028 0.3190 0.4858 0.2943 0.3897 0.2856 0.3593 0.2693 0.3873 0.2639 0.3928 0.2575 0.4028", func(t *testing.T) *tensors.Tensor {
			return NewMultiHeadAttention(torchrand.New(123), 3, 2, 6, 0.0, 2, false).Forward(golden(t, "s001/batch"))
		}},
	})

	// Cell 2 also prints each dot product in full: these are exact float32 values.
	got := flat(run(t, scores2, query, inputs))
	for i, want := range []string{"0.9544000625610352", "1.4950001239776611", "1.4754000902175903", "0.8434000015258789", "0.7070000171661377", "1.0865000486373901"} {
		if s := strconv.FormatFloat(float64(got[i]), 'g', -1, 64); s != want {
			t.Errorf("x_%d dot query = %s, the seed prints %s", i, s, want)
		}
	}
}
