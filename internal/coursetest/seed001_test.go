package coursetest

import (
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// Notebooks 01–04 follow seed 001, a PyTorch notebook: simplified attention, trainable
// weights, causal masks and dropout, multi-head attention. Each test runs one notebook with the
// attnbook kernel and checks that
//   - every code cell ran, without an error and without stderr;
//   - every deterministic line the seed prints appears, in order, in the output of the Go cell that
//     mirrors it (the cell whose source has the line "// PyTorch cell [n]");
//   - the lines the notebook adds (sanity checks, extra prints) are there too: their values were
//     checked against PyTorch 1.13 (Debian's build, the seeds' reference);
//   - every cell that draws a picture displayed one, with the expected labels, and no other cell did.

func TestSeed001Simplified(t *testing.T) {
	checkSeed001Notebook(t, "notebooks/01_simplified_attention.ipynb", seed001Notebook01, seed001Extras01, seed001Pictures01)
}

func TestSeed001TrainableWeights(t *testing.T) {
	checkSeed001Notebook(t, "notebooks/02_trainable_weights.ipynb", seed001Notebook02, seed001Extras02, seed001Pictures02)
}

func TestSeed001CausalMaskDropout(t *testing.T) {
	checkSeed001Notebook(t, "notebooks/03_causal_mask_dropout.ipynb", seed001Notebook03, seed001Extras03, seed001Pictures03)
}

func TestSeed001MultiHead(t *testing.T) {
	checkSeed001Notebook(t, "notebooks/04_multi_head.ipynb", seed001Notebook04, seed001Extras04, seed001Pictures04)
}

// checkSeed001Notebook runs notebook and checks it against seed (the seed's prints, grad_fn
// suffixes removed), extras (the notebook's own prints, verbatim) and pictures; cells are found by
// a whole source line.
func checkSeed001Notebook(t *testing.T, notebook string, seed, extras []Printed, pictures []Picture) {
	// A cell takes about a second; the limit turns a hung cell into a failure that names it.
	r := nbrun.Execute(t, notebook, "-timeout", "5m")
	CheckClean(t, r)
	CheckBackendLine(t, r)

	for _, s := range seed {
		c := CellWithLine(t, r, s.Cell)
		LinesInOrder(t, s.Cell, c.Stdout, WithoutGradFn(s.Text))
	}
	for _, s := range extras {
		c := CellWithLine(t, r, s.Cell)
		LinesInOrder(t, s.Cell, c.Stdout, strings.Split(s.Text, "\n"))
	}
	CheckPictures(t, r, pictures, CellWithLine)
}

// seed001Notebook01 is what the PyTorch cells mirrored by notebook 01 print: the seed's
// output, pasted verbatim (seed lines in the comments).
var seed001Notebook01 = []Printed{
	{Cell: "// PyTorch cell [2]", Text: `query: tensor([0.5500, 0.8700, 0.6600])
x_0 : tensor([0.4300, 0.1500, 0.8900]), dot: 0.9544000625610352
x_1 : tensor([0.5500, 0.8700, 0.6600]), dot: 1.4950001239776611
x_2 : tensor([0.5700, 0.8500, 0.6400]), dot: 1.4754000902175903
x_3 : tensor([0.2200, 0.5800, 0.3300]), dot: 0.8434000015258789
x_4 : tensor([0.7700, 0.2500, 0.1000]), dot: 0.7070000171661377
x_5 : tensor([0.0500, 0.8000, 0.5500]), dot: 1.0865000486373901
tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])`}, // lines 29–36
	{Cell: "// PyTorch cell [3]", Text: `Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
Sum: tensor(1.0000)`}, // lines 44–45
	{Cell: "// PyTorch cell [4]", Text: `tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])`}, // line 54
	{Cell: "// PyTorch cell [5]", Text: `tensor([0.4419, 0.6515, 0.5683])`},                         // line 64
	{Cell: "// PyTorch cell [6]", Text: `tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
        [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
        [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
        [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
        [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
        [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])`}, // lines 74–79
	{Cell: "// PyTorch cell [7]", Text: `tensor([[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
        [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
        [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
        [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
        [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
        [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])`}, // lines 99–104
	{Cell: "// PyTorch cell [7], second print", Text: `tensor([[1.4561, 1.3876, 1.2876],
        [1.3876, 2.5408, 1.9081],
        [1.2876, 1.9081, 2.0587]])`}, // lines 105–107
	{Cell: "// PyTorch cell [8]", Text: `> a tensor([1, 2, 3])`}, // line 149
	{Cell: "// PyTorch cell [8], stack and .T", Text: `> torch.stack(a, b) tensor([[1, 2, 3],
        [4, 5, 7]])
> c.T tensor([[1, 4],
        [2, 5],
        [3, 7]])`}, // lines 151–155
	{Cell: "// PyTorch cell [8], rows and columns", Text: `> a.unsqueeze(0) tensor([[1, 2, 3]])
> a.unsqueeze(1) tensor([[1],
        [2],
        [3]])
> a.unsqueeze(0).T tensor([[1],
        [2],
        [3]])
> a.unsqueeze(0).permute(0, 1) tensor([[1, 2, 3]])
> a[None, :] tensor([[1, 2, 3]])
> a[:, None] tensor([[1],
        [2],
        [3]])`}, // lines 156–167
	{Cell: "// PyTorch cell [8], * and @", Text: `> a*b tensor([ 4, 10, 21])
> a@b tensor(35)`}, // lines 171–172
	{Cell: "// PyTorch cell [9]", Text: `tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
        [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
        [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
        [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
        [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
        [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])`}, // lines 179–184
	{Cell: "// PyTorch cell [10]", Text: `tensor([[0.4421, 0.5931, 0.5790],
        [0.4419, 0.6515, 0.5683],
        [0.4431, 0.6496, 0.5671],
        [0.4304, 0.6298, 0.5510],
        [0.4671, 0.5910, 0.5266],
        [0.4177, 0.6503, 0.5645]])`}, // lines 197–202
}

// seed001Notebook02 is what the PyTorch cells mirrored by notebook 02 print: the seed's
// output, pasted verbatim (seed lines in the comments).
var seed001Notebook02 = []Printed{
	{Cell: "// PyTorch cell [13]", Text: `- Discovering the @ operator
torch.Size([3])
torch.Size([3, 2])
tensor([[0.2961, 0.5166],
        [0.2517, 0.6886],
        [0.0740, 0.8665]])
tensor([0.2961, 0.5166])
tensor([0.2517, 0.6886])
tensor([0.3701, 1.3831])

- Compute Query_2
tensor([0.4306, 1.4551])`}, // lines 234–245
	{Cell: "// PyTorch cell [14]", Text: `keys.shape: torch.Size([6, 2])
values.shape: torch.Size([6, 2])
queries.shape: torch.Size([6, 2])`}, // lines 256–258
	{Cell: "// PyTorch cell [15]", Text: `tensor(1.8524)`}, // line 266
	{Cell: "// PyTorch cell [16]", Text: `tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])
tensor([1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440])
All weights tensor([[0.9231, 1.3545, 1.3241, 0.7910, 0.4032, 1.1330],
        [1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440],
        [1.2544, 1.8284, 1.7877, 1.0654, 0.5508, 1.5238],
        [0.6973, 1.0167, 0.9941, 0.5925, 0.3061, 0.8475],
        [0.6114, 0.8819, 0.8626, 0.5121, 0.2707, 0.7307],
        [0.8995, 1.3165, 1.2871, 0.7682, 0.3937, 1.0996]])
All weights . T tensor([[0.9231, 1.2705, 1.2544, 0.6973, 0.6114, 0.8995],
        [1.3545, 1.8524, 1.8284, 1.0167, 0.8819, 1.3165],
        [1.3241, 1.8111, 1.7877, 0.9941, 0.8626, 1.2871],
        [0.7910, 1.0795, 1.0654, 0.5925, 0.5121, 0.7682],
        [0.4032, 0.5577, 0.5508, 0.3061, 0.2707, 0.3937],
        [1.1330, 1.5440, 1.5238, 0.8475, 0.7307, 1.0996]])`}, // lines 285–298
	{Cell: "// PyTorch cell [17]", Text: `d_k=2
attn_weights_2= tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])
context_vec_2= tensor([0.3061, 0.8210])`}, // lines 310–312
	{Cell: "// PyTorch cell [19]", Text: `tensor([[0.2996, 0.8053],
        [0.3061, 0.8210],
        [0.3058, 0.8203],
        [0.2948, 0.7939],
        [0.2927, 0.7891],
        [0.2990, 0.8040]], grad_fn=<MmBackward0>)`}, // lines 341–346
	{Cell: "// PyTorch cell [21]", Text: `tensor([[-0.0739,  0.0713],
        [-0.0748,  0.0703],
        [-0.0749,  0.0702],
        [-0.0760,  0.0685],
        [-0.0763,  0.0679],
        [-0.0754,  0.0693]], grad_fn=<MmBackward0>)`}, // lines 371–376
}

// seed001Notebook03 is what the PyTorch cells mirrored by notebook 03 print: the seed's
// output, pasted verbatim (seed lines in the comments).
var seed001Notebook03 = []Printed{
	{Cell: "// PyTorch cell [22]", Text: `tensor([[0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
        [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
        [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
        [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
        [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
        [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
       grad_fn=<SoftmaxBackward0>)`}, // lines 388–394
	{Cell: "// PyTorch cell [24]", Text: `tensor([[1., 1., 1., 1., 1., 1.],
        [1., 1., 1., 1., 1., 1.],
        [1., 1., 1., 1., 1., 1.],
        [1., 1., 1., 1., 1., 1.],
        [1., 1., 1., 1., 1., 1.],
        [1., 1., 1., 1., 1., 1.]])
tensor([[1., 0., 0., 0., 0., 0.],
        [1., 1., 0., 0., 0., 0.],
        [1., 1., 1., 0., 0., 0.],
        [1., 1., 1., 1., 0., 0.],
        [1., 1., 1., 1., 1., 0.],
        [1., 1., 1., 1., 1., 1.]])`}, // lines 404–415
	{Cell: "// PyTorch cell [30]", Text: `tensor([[0.1921, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.2041, 0.1659, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.2036, 0.1659, 0.1662, 0.0000, 0.0000, 0.0000],
        [0.1869, 0.1667, 0.1668, 0.1571, 0.0000, 0.0000],
        [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.0000],
        [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
       grad_fn=<MulBackward0>)`}, // lines 422–428
	{Cell: "// PyTorch cell [42]", Text: `tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
        [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
        [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
        [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
       grad_fn=<DivBackward0>)`}, // lines 440–446
	{Cell: "// PyTorch cell [47]", Text: `tensor([[1., 1., 1., 1., 1., 1.],
        [0., 1., 1., 1., 1., 1.],
        [0., 0., 1., 1., 1., 1.],
        [0., 0., 0., 1., 1., 1.],
        [0., 0., 0., 0., 1., 1.],
        [0., 0., 0., 0., 0., 1.]])
tensor([[0., 1., 1., 1., 1., 1.],
        [0., 0., 1., 1., 1., 1.],
        [0., 0., 0., 1., 1., 1.],
        [0., 0., 0., 0., 1., 1.],
        [0., 0., 0., 0., 0., 1.],
        [0., 0., 0., 0., 0., 0.]])
tensor([[0., 0., 1., 1., 1., 1.],
        [0., 0., 0., 1., 1., 1.],
        [0., 0., 0., 0., 1., 1.],
        [0., 0., 0., 0., 0., 1.],
        [0., 0., 0., 0., 0., 0.],
        [0., 0., 0., 0., 0., 0.]])`}, // lines 454–471
	{Cell: "// PyTorch cell [48]", Text: `tensor([[0.2899,   -inf,   -inf,   -inf,   -inf,   -inf],
        [0.4656, 0.1723,   -inf,   -inf,   -inf,   -inf],
        [0.4594, 0.1703, 0.1731,   -inf,   -inf,   -inf],
        [0.2642, 0.1024, 0.1036, 0.0186,   -inf,   -inf],
        [0.2183, 0.0874, 0.0882, 0.0177, 0.0786,   -inf],
        [0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078]],
       grad_fn=<MaskedFillBackward0>)`}, // lines 479–485
	{Cell: "// PyTorch cell [49]", Text: `tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
        [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
        [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
        [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
        [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]],
       grad_fn=<SoftmaxBackward0>)`}, // lines 492–498
	{Cell: "// PyTorch cell [56]", Text: `tensor([[2., 2., 0., 2., 2., 0.],
        [0., 0., 0., 2., 0., 2.],
        [2., 2., 2., 2., 0., 2.],
        [0., 2., 2., 0., 0., 2.],
        [0., 2., 0., 2., 0., 2.],
        [0., 2., 2., 2., 2., 0.]])`}, // lines 509–514
	{Cell: "// PyTorch cell [57]", Text: `torch.Size([2, 6, 3])`}, // line 523
	{Cell: "// PyTorch cell [85]", Text: `Original tensor shape: torch.Size([2, 3, 4])
Mask shape: torch.Size([3, 4])
Mask: tensor([[False, False, False, False],
        [ True,  True,  True,  True],
        [False, False, False, False]])

Result tensor:
tensor([[[ 1.,  1.,  1.,  1.],
         [-2., -2., -2., -2.],
         [ 1.,  1.,  1.,  1.]],

        [[ 1.,  1.,  1.,  1.],
         [-2., -2., -2., -2.],
         [ 1.,  1.,  1.,  1.]]])`}, // lines 545–558
	{Cell: "// PyTorch cell [73]", Text: `Shape of attn_scores: torch.Size([2, 6, 6])
context_vecs.shape: torch.Size([2, 6, 2])`}, // lines 611–612
}

// seed001Notebook04 is what the PyTorch cells mirrored by notebook 04 print: the seed's
// output, pasted verbatim (seed lines in the comments).
var seed001Notebook04 = []Printed{
	{Cell: "// PyTorch cell [67]", Text: `context_vecs.shape: torch.Size([2, 6, 4])
tensor([[[-0.4519,  0.2216,  0.4772,  0.1063],
         [-0.5874,  0.0058,  0.5891,  0.3257],
         [-0.6300, -0.0632,  0.6202,  0.3860],
         [-0.5675, -0.0843,  0.5478,  0.3589],
         [-0.5526, -0.0981,  0.5321,  0.3428],
         [-0.5299, -0.1081,  0.5077,  0.3493]],

        [[-0.4519,  0.2216,  0.4772,  0.1063],
         [-0.5874,  0.0058,  0.5891,  0.3257],
         [-0.6300, -0.0632,  0.6202,  0.3860],
         [-0.5675, -0.0843,  0.5478,  0.3589],
         [-0.5526, -0.0981,  0.5321,  0.3428],
         [-0.5299, -0.1081,  0.5077,  0.3493]]], grad_fn=<CatBackward0>)`}, // lines 643–656
	{Cell: "// PyTorch cell [91]", Text: `Original tensor: tensor([ 1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12])
Original shape: torch.Size([12])`}, // lines 669–670
	{Cell: "// PyTorch cell [92]", Text: `Reshaped to 3x4:
tensor([[ 1,  2,  3,  4],
        [ 5,  6,  7,  8],
        [ 9, 10, 11, 12]])
New shape: torch.Size([3, 4])`}, // lines 681–685
	{Cell: "// PyTorch cell [88]", Text: `Reshaped to 2x2x3:
tensor([[[ 1,  2,  3],
         [ 4,  5,  6]],

        [[ 7,  8,  9],
         [10, 11, 12]]])
New shape: torch.Size([2, 2, 3])`}, // lines 696–702
	{Cell: "// PyTorch cell [101]", Text: `Reshaped with automatic dimension:
tensor([[[ 1,  2,  3],
         [ 4,  5,  6]],

        [[ 7,  8,  9],
         [10, 11, 12]]])
New shape: torch.Size([2, 2, 3])`}, // lines 713–719
	{Cell: "// PyTorch cell [90]", Text: `Flattened tensor:
tensor([ 1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12])
New shape: torch.Size([12])`}, // lines 730–732
	{Cell: "// PyTorch cell [106]", Text: `contiguous tensor:
tensor([[[ 1,  2,  3],
         [ 4,  5,  6]],

        [[ 7,  8,  9],
         [10, 11, 12]]])`}, // lines 742–747
	{Cell: "// PyTorch cell [102], seeded", Text: `Weight shape: torch.Size([5, 3])
Bias shape: torch.Size([5])

Input x1 shape: torch.Size([3])
Output y1 shape: torch.Size([5])

Input x2 shape: torch.Size([10, 3])
Output y2 shape: torch.Size([10, 5])

Input x3 shape: torch.Size([4, 6, 3])
Output y3 shape: torch.Size([4, 6, 5])

Manual calculation shape: torch.Size([5])
Are results equal? True`}, // lines 794–807
	{Cell: "// PyTorch cell [123]", Text: `context_vecs.shape: torch.Size([2, 6, 2])
tensor([[[0.3190, 0.4858],
         [0.2943, 0.3897],
         [0.2856, 0.3593],
         [0.2693, 0.3873],
         [0.2639, 0.3928],
         [0.2575, 0.4028]],

        [[0.3190, 0.4858],
         [0.2943, 0.3897],
         [0.2856, 0.3593],
         [0.2693, 0.3873],
         [0.2639, 0.3928],
         [0.2575, 0.4028]]], grad_fn=<ViewBackward0>)`}, // lines 900–913
}

// Where a notebook corrects the seed, the seed's own line is not expected: the corrected line is.
var seed001Corrections = []Printed{
	// Seed cell [8] printed a under the label "> b" (print("> b", a)): "> b tensor([1, 2, 3])".
	{Cell: "// PyTorch cell [8]", Text: "> b tensor([4, 5, 7])"},
	// Seed cell [8] computed a[None, :, None] but labelled it "> a[:, None, None]".
	{Cell: "// PyTorch cell [8], rows and columns", Text: "> a[None, :, None] tensor([[[1],\n         [2],\n         [3]]])"},
	// Seed cell [106] printed x_flat.shape (torch.Size([12])) as the shape of x_contig.
	{Cell: "// PyTorch cell [106]", Text: "New shape: torch.Size([2, 2, 3])"},
}

// seed001Extras01 are the lines notebook 01 prints beyond the seed (values checked with PyTorch 1.13).
var seed001Extras01 = append(seed001Pick(seed001Corrections, 0, 1), []Printed{
	{Cell: "// PyTorch cell [1]", Text: "inputs.shape: torch.Size([6, 3])\ntensor([[0.4300, 0.1500, 0.8900],\n        [0.0500, 0.8000, 0.5500]])"},
	{Cell: "// PyTorch cell [2]", Text: "attn_scores_2.shape: torch.Size([6])"},
	{Cell: "// PyTorch cell [4]", Text: "Sum: tensor(1.)"},
	{Cell: `display.Println("exp(88), exp(89):", eager.Exp(eager.Tensor([]float64{88, 89})))`, Text: strings.Join([]string{
		"exp(88), exp(89): tensor([1.6516e+38,        inf])",
		"softmaxNaive(big):      tensor([nan, nan, nan])",
		"big - max(big):         tensor([-2., -1.,  0.])",
		"softmaxNaive(big - max): tensor([0.0900, 0.2447, 0.6652])",
		"softmax(big):           tensor([0.0900, 0.2447, 0.6652])",
	}, "\n")},
	{Cell: `naive, stable := softmaxNaive(attnScores2), eager.Softmax(attnScores2, 0)`, Text: "naive:  tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])\nstable: tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])\nallclose: True"},
	{Cell: "// PyTorch cell [5]", Text: "context_vec_2.shape: torch.Size([3])"},
	{Cell: "// PyTorch cell [7]", Text: "same as the loops, bit for bit: True"},
	{Cell: `showError(func() { eager.Mul(inputs, eager.T(inputs)) }) // inputs * inputs.T`, Text: "error: eager.Mul: a [6 3] and b [3 6] don't broadcast…"},
	{Cell: "// PyTorch cell [8], stack and .T", Text: "c.shape: torch.Size([2, 3])  c.T.shape: torch.Size([3, 2])"},
	{Cell: "// PyTorch cell [8], rows and columns", Text: strings.Join([]string{
		"> a.T tensor([1, 2, 3])",
		"> a.unsqueeze(0).permute(1, 0) tensor([[1],",
		"shapes: torch.Size([1, 3]) torch.Size([3, 1]) torch.Size([1, 3, 1])",
		"error: eager.Unsqueeze: dim=2 out of range…",
	}, "\n")},
	{Cell: "// PyTorch cell [8], * and @", Text: "> (a*b).sum() tensor(35)"},
	{Cell: "// PyTorch cell [9]", Text: "row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])\nrow 1 equals attn_weights_2: True"},
	{Cell: "// PyTorch cell [10]", Text: "all_context_vecs.shape: torch.Size([6, 3])\nrow 1: tensor([0.4419, 0.6515, 0.5683])"},
}...)

var seed001Pictures01 = []Picture{
	{"display.ShowHeatmap(AttnWeights(), tokens...)", []string{">Your<", ">journey<", ">step<", ">0.24<", "every row sums to 1"}},
}

var seed001Extras02 = []Printed{
	{Cell: "// PyTorch cell [11]", Text: "x_2: tensor([0.5500, 0.8700, 0.6600])\nd_in: 3  d_out: 2"},
	{Cell: "// PyTorch cell [12]", Text: "W_query: torch.Size([3, 2])  W_key: torch.Size([3, 2])  W_value: torch.Size([3, 2])"},
	{Cell: "// PyTorch cell [13]", Text: "key_2: tensor([0.4433, 1.1419])  value_2: tensor([0.3951, 1.0037])"},
	{Cell: "// PyTorch cell [16]", Text: "error: eager.MatMul: a [6 2] and b [6 2]: inner dimensions 2 and 6 differ"},
	{Cell: "// PyTorch cell [17]", Text: "sum: tensor(1.)"},
	{Cell: `display.Println("softmax(scores):        ", eager.Softmax(attnScores2, -1))`, Text: strings.Join([]string{
		"softmax(scores):         tensor([0.1401, 0.2507, 0.2406, 0.1157, 0.0687, 0.1842])",
		"softmax(scores / √d_k):  tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])",
		"softmax(scores × 8):     tensor([5.2402e-03, 5.5091e-01, 3.9597e-01, 1.1373e-03, 1.7498e-05, 4.6724e-02])",
	}, "\n")},
	{Cell: "// PyTorch cell [19]", Text: "output shape: torch.Size([6, 2])\nrow 1: tensor([0.3061, 0.8210])"},
	{Cell: "// PyTorch cell [21]", Text: "W_query.weight.shape: torch.Size([2, 3])\noutput shape: torch.Size([6, 2])"},
	{Cell: `v1 := &SelfAttentionV1{`,
		Text: "v1 with v2's weights transposed gives v2's output: True"},
	{Cell: `m1 := attention.NewSelfAttentionV1(torchrand.New(123), dIn, dOut)`,
		Text: "SelfAttentionV1 agrees: True  parameters: 18\nSelfAttentionV2 agrees: True  parameters: 18"},
	{Cell: `display.ShowHeatmap(weights, tokens...)`, Text: "weights shape: torch.Size([6, 6])"},
}

var seed001Pictures02 = []Picture{
	// SelfAttention_v2's weights (seed 789), row 0 of seed cell [22]: 0.1921 0.1646 …
	{`display.ShowHeatmap(weights, tokens...)`, []string{">journey<", ">0.19<", ">0.16<", "every row sums to 1"}},
}

var seed001Extras03 = []Printed{
	{Cell: "// PyTorch cell [22]", Text: "attn_weights.shape: torch.Size([6, 6])\nrow sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])"},
	{Cell: "// PyTorch cell [30]", Text: "row sums: tensor([0.1921, 0.3700, 0.5357, 0.6775, 0.8415, 1.0000])"},
	{Cell: "// PyTorch cell [42]", Text: "row_sums.shape: torch.Size([6, 1])\nrow sums: tensor([1., 1., 1., 1., 1., 1.])"},
	{Cell: `rowSums := eager.Sum(maskedSimple, -1, false) // no keepdim`, Text: strings.Join([]string{
		"row_sums.shape: torch.Size([6])",
		"tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],",
		"        [1.0625, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],",
		"        [1.0070, 0.4495, 0.3109, 0.2276, 0.1979, 0.1529]])",
		"row sums: tensor([1.0000, 1.5108, 1.8183, 1.9665, 2.1468, 2.3458])",
	}, "\n")},
	{Cell: "// PyTorch cell [49]", Text: "row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000])"},
	{Cell: `a, b := MaskedSimpleNorm(), CausalWeights()`, Text: "same weights: True"},
	{Cell: "// PyTorch cell [56]", Text: "kept 21 of 36 entries, each now 2 (1/(1-0.5)); mean 1.1667"},
	// torch.manual_seed(123); nn.Dropout(0.5)(attn_weights) on the causal weights of cell [49].
	{Cell: `dropped := torchrand.New(123).Dropout(attnWeights, 0.5)`, Text: strings.Join([]string{
		"tensor([[2.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],",
		"        [0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],",
		"        [0.7599, 0.6194, 0.6206, 0.0000, 0.0000, 0.0000],",
		"        [0.0000, 0.4921, 0.4925, 0.0000, 0.0000, 0.0000],",
		"        [0.0000, 0.3966, 0.0000, 0.3775, 0.0000, 0.0000],",
		"        [0.0000, 0.3327, 0.3331, 0.3084, 0.3331, 0.0000]])",
	}, "\n")},
	// The seed prints only the shape of CausalAttention's output; its values (PyTorch 1.13, seed
	// 123) are the first head of the wrapper in seed cell [67].
	{Cell: "// PyTorch cell [73]", Text: strings.Join([]string{
		"tensor([[[-0.4519,  0.2216],",
		"         [-0.5874,  0.0058],",
		"         [-0.6300, -0.0632],",
		"         [-0.5675, -0.0843],",
		"         [-0.5526, -0.0981],",
		"         [-0.5299, -0.1081]],",
		"        [[-0.4519,  0.2216],",
		"         [-0.5299, -0.1081]]])",
	}, "\n")},
	{Cell: `m := attention.NewCausalAttention(torchrand.New(123), dIn, dOut, 6, 0.0, false)`,
		Text: "context vectors agree: True\nweights agree: True  weights shape: torch.Size([2, 6, 6])"},
}

var seed001Pictures03 = []Picture{
	{"// PyTorch cell [24]", []string{"torch.tril(ones)", ">1: may attend<", ">0: future, hidden<", ">journey<"}},
	{`a, b := MaskedSimpleNorm(), CausalWeights()`, []string{"softmax, × tril, renormalise", "masked_fill(−inf), softmax", ">0.55<", ">0.45<", "masked"}},
	{`dropped := torchrand.New(123).Dropout(example, 0.5)`, []string{"ones(6, 6)", "Dropout(0.5), seed 123", "dropped (dropout)"}},
	{`dropped := torchrand.New(123).Dropout(attnWeights, 0.5)`, []string{"causal weights after Dropout(0.5)", "dropped (dropout)", ">0.76<"}},
	{`weights := eager.Index(ca.LastWeights, 0) // batch element 0: [6, 6]`, []string{"CausalAttention (seed 123): batch 0", ">0.48<", ">0.52<", "every row sums to 1"}},
}

var seed001Extras04 = append(seed001Pick(seed001Corrections, 2), []Printed{
	{Cell: "fmt.Println(\"batch.shape:\", display.Shape(Batch()))", Text: "batch.shape: torch.Size([2, 6, 3])"},
	{Cell: `theirs := attention.NewMultiHeadAttentionWrapper(torchrand.New(123), 3, 2, 6, 0.0, 2, false).`, Text: "pkg/attention agrees: True"},
	{Cell: "// PyTorch cell [101]", Text: "error: eager.View: cannot view [12] as [5 -1]…"},
	{Cell: "// PyTorch cell [106]", Text: "x_3d.transpose(1, 2).contiguous().view(-1): tensor([ 1,  4,  2,  5,  3,  6,  7, 10,  8, 11,  9, 12])"},
	// torch.manual_seed(123) in front of seed cell [102]: y1 = linear(x1).
	{Cell: "// PyTorch cell [102], seeded", Text: "y1: tensor([-0.2378, -0.1029,  0.3835,  0.0530,  0.1694])"},
	{Cell: "mha.Debug = true", Text: strings.Join([]string{
		"x                                            torch.Size([2, 6, 3])",
		"keys = W_key(x)                              torch.Size([2, 6, 2])",
		"keys.view(b, T, h, hd)                       torch.Size([2, 6, 2, 1])",
		"keys.transpose(1, 2)                         torch.Size([2, 2, 6, 1])",
		"attn_scores = queries @ keys.transpose(2, 3) torch.Size([2, 2, 6, 6])",
		"(attn_weights @ values).transpose(1, 2)      torch.Size([2, 6, 2, 1])",
		"contiguous().view(b, T, d_out)               torch.Size([2, 6, 2])",
		"out_proj                                     torch.Size([2, 6, 2])",
	}, "\n")},
	{Cell: `weights := eager.Index(mha.LastWeights, 0) // batch element 0: [h, T, T]`, Text: strings.Join([]string{
		"attention weights: torch.Size([2, 2, 6, 6]) → batch 0: torch.Size([2, 6, 6])",
		"row sums: tensor([[1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000],",
		"        [1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000]])",
	}, "\n")},
	{Cell: `m := attention.NewMultiHeadAttention(torchrand.New(123), 3, 2, 6, 0.0, 2, false)`, Text: "output agrees: True\nweights agree: True\nparameters: 24"},
}...)

var seed001Pictures04 = []Picture{
	{`display.ShowFigure(display.HeadSplit(6, 2, 1).Batch(2).Tokens(tokens...).`,
		[]string{"x.view(b, t, h, hd)", ".transpose(1, 2)", "[2, 6, 2, 1]", "[2, 2, 6, 1]", "head k gets feature k of every token"}},
	{`weights := eager.Index(mha.LastWeights, 0) // batch element 0: [h, T, T]`,
		[]string{"MultiHeadAttention (seed 123), batch 0", ">head 0<", ">head 1<", ">0.48<", ">0.52<", ">0.50<"}},
	// The explorer, run headless, leaves the static grid of both heads and returns.
	{`display.ExploreHeads(eager.Index(mha.LastWeights, 0), 2*time.Minute, tokens...)`,
		[]string{`class="attnbook-heads"`, "weights [2, 6, 6]", ">head 0<", ">head 1<", ">0.48<", ">0.52<"}},
}

// seed001Pick returns the corrections at the given indexes.
func seed001Pick(s []Printed, idx ...int) []Printed {
	var out []Printed
	for _, i := range idx {
		out = append(out, s[i])
	}
	return out
}
