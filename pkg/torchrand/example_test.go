package torchrand_test

import (
	"fmt"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
)

// torch.manual_seed(0); torch.randn(6, 6)[0] and torch.randn(3).
func ExampleNew() {
	g := torchrand.New(0)
	x := tensors.MustCopyFlatData[float32](g.Randn(6, 6))
	fmt.Println(x[:6])

	g.ManualSeed(0) // like calling torch.manual_seed(0) again
	fmt.Println(tensors.MustCopyFlatData[float32](g.Randn(3)))

	// Only the low 32 bits of a seed count, as in PyTorch: -1 is 2^32-1.
	a := tensors.MustCopyFlatData[float32](torchrand.New(-1).Rand(2))
	b := tensors.MustCopyFlatData[float32](torchrand.New(1<<32 - 1).Rand(2))
	fmt.Println(a[0] == b[0] && a[1] == b[1])
	// Output:
	// [-1.1258398 -1.1523602 -0.25057858 -0.4338788 0.84871036 0.69200915]
	// [1.5409961 -0.2934289 -2.1787894]
	// true
}

// torch.manual_seed(123); torch.rand(3, 2)
func ExampleGenerator_Rand() {
	g := torchrand.New(123)
	x := g.Rand(3, 2)
	fmt.Println(x.Shape())
	fmt.Println(tensors.MustCopyFlatData[float32](x))
	// Output:
	// (Float32)[3, 2]
	// [0.29611194 0.5165623 0.25167072 0.6885568 0.07397246 0.86652195]
}

// torch.manual_seed(789) and three nn.Linear(3, 2, bias=False) built in the order W_query,
// W_key, W_value: the trainable self-attention weights of the seed documents.
func ExampleGenerator_Linear() {
	g := torchrand.New(789)
	wQuery, _ := g.Linear(3, 2, false) // [2, 3] = [out, in], like PyTorch's weight
	wKey, _ := g.Linear(3, 2, false)
	wValue, _ := g.Linear(3, 2, false)
	fmt.Println(tensors.MustCopyFlatData[float32](wQuery))
	fmt.Println(tensors.MustCopyFlatData[float32](wKey))
	fmt.Println(tensors.MustCopyFlatData[float32](wValue))

	// With a bias, the weight is drawn first, then the bias.
	w, b := torchrand.New(123).Linear(5, 3, true)
	fmt.Println(tensors.MustCopyFlatData[float32](w)[0], tensors.MustCopyFlatData[float32](b))
	// Output:
	// [0.31605908 0.45680857 0.51183486 -0.1682854 -0.33787704 -0.09177387]
	// [0.40580583 -0.47042054 0.2368052 0.21336074 -0.26005065 -0.510543]
	// [0.25256988 -0.14147827 -0.19618134 0.5191074 -0.08516758 -0.20432705]
	// -0.18236302 [-0.087886296 -0.3411629 0.29283133]
}

// torch.manual_seed(123); nn.Dropout(0.5) in training mode on torch.ones(6, 6).
func ExampleGenerator_Dropout() {
	g := torchrand.New(123)
	x := tensors.FromScalarAndDimensions(float32(1), 6, 6)
	y := tensors.MustCopyFlatData[float32](g.Dropout(x, 0.5))
	for row := range 6 {
		fmt.Println(y[row*6 : row*6+6])
	}
	// Output:
	// [2 2 0 2 2 0]
	// [0 0 0 2 0 2]
	// [2 2 2 2 0 2]
	// [0 2 2 0 0 2]
	// [0 2 0 2 0 2]
	// [0 2 2 2 2 0]
}
