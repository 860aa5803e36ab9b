#!/usr/bin/python3
"""Writes goldens.json: PyTorch's results for every eager operation, for eager_test.go.

Run with Debian's PyTorch (python3-torch 1.13) on the reference BLAS, not a pip/conda one:

    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas \
        /usr/bin/python3 pkg/eager/testdata/gen_goldens.py > pkg/eager/testdata/goldens.json

(go test ./pkg/eager -run TestGoldens -update does that.) Installing libopenblas0-pthread makes
OpenBLAS the system's libblas.so.3 (update-alternatives, priority 100 against the reference
BLAS's 10), and OpenBLAS sums products in another order: this script refuses to run on it. The
reference BLAS is Debian's libblas3 (apt-get install libblas3), in /usr/lib/x86_64-linux-gnu/blas.

Each case is one operation: its inputs are PyTorch tensors (often the intermediate values of the
seed notebooks 000/001/002, recomputed here the same way), "want" is PyTorch's output. "exact"
marks operations that only move, select or compare values (or work on integers): Go must match
them bit for bit; float arithmetic is compared at a relative error of 1e-6.
"""
import json
import math
import sys

import torch


def refuse_openblas():
    """Exit unless the libblas.so.3 PyTorch loaded is the reference one (libblas3). (OpenBLAS's
    liblapack.so.3 still loads libopenblas, but the BLAS symbols resolve to libblas.so.3 first.)"""
    torch.ones(2, 2) @ torch.ones(2, 2)  # Load the BLAS.
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "/libblas.so" in line}
    if not libs or any("openblas" in lib for lib in libs):
        sys.exit("gen_goldens.py: PyTorch loaded OpenBLAS, whose sums differ from the reference BLAS; run with "
                 "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas (apt-get install libblas3)")


refuse_openblas()
torch.set_printoptions(precision=4)
cases = []


def enc(t):
    """A tensor as {dtype, shape, data} with float data as exact numbers ("inf"/"-inf"/"nan")."""
    t = t.detach()
    dtype = str(t.dtype).replace("torch.", "")
    data = t.flatten().tolist()
    if t.dtype.is_floating_point:
        data = [num(v) for v in data]
    return {"dtype": dtype, "shape": list(t.shape), "data": data}


def num(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


EXACT_OPS = {"T", "MT", "transpose", "permute", "view", "reshape", "contiguous", "unsqueeze",
             "squeeze", "stack", "cat", "index", "slice", "neg", "abs", "not", "max", "max_all",
             "argmax", "masked_fill", "ones", "zeros", "full", "arange", "float", "long", "bool",
             "triu", "tril", "eq", "allclose", "item"}


def case(name, op, inputs, want, **args):
    exact = op in EXACT_OPS or not want.dtype.is_floating_point if isinstance(want, torch.Tensor) else True
    c = {"name": name, "op": op, "args": {k: num(v) for k, v in args.items()},
         "inputs": [enc(t) for t in inputs], "exact": bool(exact)}
    if isinstance(want, torch.Tensor):
        c["want"] = enc(want)
    elif isinstance(want, bool):
        c["want_bool"] = want
    else:
        c["want_number"] = num(float(want))
    cases.append(c)


def f32(*shape, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).float()


def i64(*shape, seed=0, lo=-9, hi=10):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g)


# ---------------------------------------------------------------- seed 001: simplified attention
inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                       [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
query = inputs[1]
case("001[2] inputs[1]", "index", [inputs], inputs[1], i=1)
scores2 = torch.empty(6)
for i, x_i in enumerate(inputs):
    scores2[i] = x_i.dot(query)
    case(f"001[2] x_{i}.dot(query)", "dot", [x_i, query], x_i.dot(query))
case("001[2] stack of dots", "stack", [s.reshape(()) for s in scores2], scores2, dim=0)
case("001[3] attn_scores_2.sum()", "sum_all", [scores2], scores2.sum())
case("001[3] scores / sum", "div", [scores2, scores2.sum()], scores2 / scores2.sum())
case("001[3] weights.sum()", "sum_all", [scores2 / scores2.sum()], (scores2 / scores2.sum()).sum())
case("001[4] exp", "exp", [scores2], torch.exp(scores2))
naive = torch.exp(scores2) / torch.exp(scores2).sum(dim=0)
case("001[4] softmax_naive div", "div", [torch.exp(scores2), torch.exp(scores2).sum(dim=0)], naive)
case("001[4] sum dim 0", "sum", [torch.exp(scores2)], torch.exp(scores2).sum(dim=0), dim=0, keepdim=False)
ctx = torch.zeros(3)
for i, x_i in enumerate(inputs):
    term = naive[i] * x_i
    case(f"001[5] weights[{i}] * x_{i}", "mul", [naive[i], x_i], term)
    case(f"001[5] context += term {i}", "add", [ctx, term], ctx + term)
    ctx = ctx + term
case("001[5] zeros(3)", "zeros", [], torch.zeros(3), dims=[3])
case("001[7] inputs.T", "T", [inputs], inputs.T)
scores = inputs @ inputs.T
case("001[7] inputs @ inputs.T", "matmul", [inputs, inputs.T], scores)
case("001[7] inputs.T @ inputs", "matmul", [inputs.T, inputs], inputs.T @ inputs)

a = torch.tensor([1, 2, 3])
b = torch.tensor([4, 5, 7])
c = torch.stack((a, b))
case("001[8] torch.stack((a, b))", "stack", [a, b], c, dim=0)
case("001[8] c.T", "T", [c], c.T)
case("001[8] a.T (1-D)", "T", [a], a)
case("001[8] a.unsqueeze(0)", "unsqueeze", [a], a.unsqueeze(0), dim=0)
case("001[8] a.unsqueeze(1)", "unsqueeze", [a], a.unsqueeze(1), dim=1)
case("001[8] a.unsqueeze(0).T", "T", [a.unsqueeze(0)], a.unsqueeze(0).T)
case("001[8] a.unsqueeze(0).permute(0, 1)", "permute", [a.unsqueeze(0)], a.unsqueeze(0).permute(0, 1), dims=[0, 1])
case("001[8] a[None, :, None]", "unsqueeze", [a.unsqueeze(0)], a[None, :, None], dim=2)
case("001[8] a*b", "mul", [a, b], a * b)
case("001[8] a@b", "matmul", [a, b], a @ b)
case("001[8] a.dot(b) int64", "dot", [a, b], a.dot(b))

weights = torch.softmax(scores, dim=1)
case("001[9] softmax(attn_scores, dim=1)", "softmax", [scores], weights, dim=1)
case("001[10] attn_weights @ inputs", "matmul", [weights, inputs], weights @ inputs)

torch.manual_seed(123)
W_query = torch.rand(3, 2)
W_key = torch.rand(3, 2)
W_value = torch.rand(3, 2)
x_2 = inputs[1]
for v in ([1.0, 0, 0], [0.0, 1, 0], [1.0, 0, 1]):
    case(f"001[13] tensor({v}) @ W_query", "matmul", [torch.tensor(v), W_query], torch.tensor(v) @ W_query)
query_2 = x_2 @ W_query
case("001[13] x_2 @ W_query", "matmul", [x_2, W_query], query_2)
keys = inputs @ W_key
values = inputs @ W_value
queries = inputs @ W_query
case("001[14] inputs @ W_key", "matmul", [inputs, W_key], keys)
case("001[15] query_2.dot(keys[1])", "dot", [query_2, keys[1]], query_2.dot(keys[1]))
scores_2 = query_2 @ keys.T
case("001[16] query_2 @ keys.T", "matmul", [query_2, keys.T], scores_2)
case("001[16] keys @ query_2", "matmul", [keys, query_2], keys @ query_2)
case("001[16] queries @ keys.T", "matmul", [queries, keys.T], queries @ keys.T)
case("001[16] keys @ queries.T", "matmul", [keys, queries.T], keys @ queries.T)
d_k = keys.shape[-1]
case("001[17] scores_2 / d_k**0.5", "div_scalar", [scores_2], scores_2 / d_k**0.5, s=d_k**0.5)
w2 = torch.softmax(scores_2 / d_k**0.5, dim=-1)
case("001[17] softmax(dim=-1)", "softmax", [scores_2 / d_k**0.5], w2, dim=-1)
case("001[17] attn_weights_2 @ values", "matmul", [w2, values], w2 @ values)

torch.manual_seed(789)
lin_q = torch.nn.Linear(3, 2, bias=False)
lin_k = torch.nn.Linear(3, 2, bias=False)
q = lin_q(inputs)
k = lin_k(inputs)
case("001[22] W_query(inputs) (nn.Linear, no bias)", "linear", [inputs, lin_q.weight], q)
s22 = q @ k.T
case("001[22] queries @ keys.T", "matmul", [q, k.T], s22)
aw = torch.softmax(s22 / k.shape[-1] ** 0.5, dim=-1)
case("001[22] softmax(scores / sqrt(2))", "softmax", [s22 / k.shape[-1] ** 0.5], aw, dim=-1)
ones6 = torch.ones(6, 6)
case("001[24] ones(6, 6)", "ones", [], ones6, dims=[6, 6])
mask_simple = torch.tril(ones6)
case("001[24] tril(ones)", "tril", [ones6], mask_simple, diagonal=0)
masked_simple = aw * mask_simple
case("001[30] attn_weights * mask_simple", "mul", [aw, mask_simple], masked_simple)
row_sums = masked_simple.sum(dim=-1, keepdim=True)
case("001[42] sum(dim=-1, keepdim=True)", "sum", [masked_simple], row_sums, dim=-1, keepdim=True)
case("001[42] masked_simple / row_sums", "div", [masked_simple, row_sums], masked_simple / row_sums)
for d in (0, 1, 2):
    case(f"001[47] triu(ones, diagonal={d})", "triu", [ones6], torch.triu(ones6, diagonal=d), diagonal=d)
mask = torch.triu(ones6, diagonal=1)
case("001[48] mask.bool()", "bool", [mask], mask.bool())
masked = s22.masked_fill(mask.bool(), -torch.inf)
case("001[48] masked_fill(mask.bool(), -inf)", "masked_fill", [s22, mask.bool()], masked, value=-math.inf)
case("001[49] masked / sqrt(2)", "div_scalar", [masked], masked / k.shape[-1] ** 0.5, s=k.shape[-1] ** 0.5)
case("001[49] softmax(dim=1) with -inf", "softmax", [masked / k.shape[-1] ** 0.5],
     torch.softmax(masked / k.shape[-1] ** 0.5, dim=1), dim=1)
batch = torch.stack((inputs, inputs), dim=0)
case("001[57] stack((inputs, inputs), dim=0)", "stack", [inputs, inputs], batch, dim=0)

t85 = torch.ones(2, 3, 4)
m85 = torch.zeros(3, 4, dtype=torch.bool)
m85[1, :] = True
case("001[85] ones(2, 3, 4)", "ones", [], t85, dims=[2, 3, 4])
case("001[85] masked_fill broadcast [3 4] mask", "masked_fill", [t85, m85], t85.masked_fill(m85, -2), value=-2)

# CausalAttention on the batch (seed 123), step by step.
torch.manual_seed(123)
cq, ck, cv = (torch.nn.Linear(3, 2, bias=False) for _ in range(3))
K_ = ck(batch)
Q_ = cq(batch)
V_ = cv(batch)
case("001[72] W_key(batch) 3-D", "linear", [batch, ck.weight], K_)
case("001[72] keys.transpose(1, 2)", "transpose", [K_], K_.transpose(1, 2), dim0=1, dim1=2)
S_ = Q_ @ K_.transpose(1, 2)
case("001[72] queries @ keys.transpose(1, 2)", "matmul", [Q_, K_.transpose(1, 2)], S_)
cmask = torch.triu(torch.ones(6, 6), diagonal=1)
case("001[72] mask.bool()[:4, :4] rows", "slice", [cmask.bool()], cmask.bool()[:4], dim=0, start=0, end=4)
case("001[72] mask.bool()[:, :4] cols", "slice", [cmask.bool()[:4]], cmask.bool()[:4, :4], dim=1, start=0, end=4)
S_m = S_.masked_fill(cmask.bool()[:6, :6], -torch.inf)
case("001[72] masked_fill_ batch", "masked_fill", [S_, cmask.bool()], S_m, value=-math.inf)
W_ = torch.softmax(S_m / K_.shape[-1] ** 0.5, dim=-1)
case("001[72] softmax batch", "softmax", [S_m / K_.shape[-1] ** 0.5], W_, dim=-1)
C_ = W_ @ V_
case("001[72] attn_weights @ values batch", "matmul", [W_, V_], C_)
case("001[66] cat heads dim=-1", "cat", [C_, C_ * 2], torch.cat([C_, C_ * 2], dim=-1), dim=-1)

x12 = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
case("001[92] x.view(3, 4)", "view", [x12], x12.view(3, 4), dims=[3, 4])
x3d = x12.view(2, 2, 3)
case("001[88] x.view(2, 2, 3)", "view", [x12], x3d, dims=[2, 2, 3])
case("001[101] x.view(2, -1, 3)", "view", [x12], x12.view(2, -1, 3), dims=[2, -1, 3])
case("001[90] x_3d.view(-1)", "view", [x3d], x3d.view(-1), dims=[-1])
case("001[106] x_3d.contiguous()", "contiguous", [x3d], x3d.contiguous())

torch.manual_seed(123)
linear = torch.nn.Linear(3, 5)
x1 = torch.randn(3)
x2 = torch.randn(10, 3)
x3 = torch.randn(4, 6, 3)
case("001[102] linear(x1) 1-D", "linear", [x1, linear.weight, linear.bias], linear(x1))
case("001[102] linear(x2) 2-D", "linear", [x2, linear.weight, linear.bias], linear(x2))
case("001[102] linear(x3) 3-D", "linear", [x3, linear.weight, linear.bias], linear(x3))
manual = x1 @ linear.weight.T + linear.bias
case("001[102] x1 @ weight.T", "matmul", [x1, linear.weight.T], x1 @ linear.weight.T)
case("001[102] + bias", "add", [x1 @ linear.weight.T, linear.bias], manual)
case("001[102] allclose(y1, manual)", "allclose", [linear(x1), manual], torch.allclose(linear(x1), manual),
     rtol=1e-05, atol=1e-08)

# Vectorized MultiHeadAttention (seed 123, d_out=2, 2 heads) step by step.
torch.manual_seed(123)
wq, wk, wv = (torch.nn.Linear(3, 2, bias=False) for _ in range(3))
out_proj = torch.nn.Linear(2, 2)
b_, T_, H_, hd = 2, 6, 2, 1
Kh = wk(batch).view(b_, T_, H_, hd)
Qh = wq(batch).view(b_, T_, H_, hd)
Vh = wv(batch).view(b_, T_, H_, hd)
case("001[108] keys.view(b, T, H, hd)", "view", [wk(batch)], Kh, dims=[b_, T_, H_, hd])
Kt, Qt, Vt = Kh.transpose(1, 2), Qh.transpose(1, 2), Vh.transpose(1, 2)
case("001[108] keys.transpose(1, 2) 4-D", "transpose", [Kh], Kt, dim0=1, dim1=2)
Sh = Qt @ Kt.transpose(2, 3)
case("001[108] keys.transpose(2, 3)", "transpose", [Kt], Kt.transpose(2, 3), dim0=2, dim1=3)
case("001[108] queries @ keys.transpose(2, 3)", "matmul", [Qt, Kt.transpose(2, 3)], Sh)
Shm = Sh.masked_fill(cmask.bool(), -torch.inf)
case("001[108] masked_fill 4-D", "masked_fill", [Sh, cmask.bool()], Shm, value=-math.inf)
Wh = torch.softmax(Shm / hd ** 0.5, dim=-1)
case("001[108] softmax 4-D", "softmax", [Shm / hd ** 0.5], Wh, dim=-1)
Ch = (Wh @ Vt).transpose(1, 2)
case("001[108] attn_weights @ values 4-D", "matmul", [Wh, Vt], Wh @ Vt)
case("001[108] (..).transpose(1, 2)", "transpose", [Wh @ Vt], Ch, dim0=1, dim1=2)
Cv = Ch.contiguous().view(b_, T_, 2)
case("001[108] contiguous().view(b, T, d_out)", "view", [Ch], Cv, dims=[b_, T_, 2])
case("001[108] out_proj", "linear", [Cv, out_proj.weight, out_proj.bias], out_proj(Cv))

# ---------------------------------------------------------------- seed 000: MHA by hand
x0 = torch.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
                    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]])
torch.manual_seed(0)
Wq0, Wk0, Wv0 = torch.randn(6, 6), torch.randn(6, 6), torch.randn(6, 6)
Q0, K0, V0 = x0 @ Wq0, x0 @ Wk0, x0 @ Wv0
case("000[10] x @ Wq (3-D @ 2-D)", "matmul", [x0, Wq0], Q0)
Q0 = Q0.view(1, 3, 2, 3).transpose(1, 2)
K0 = K0.view(1, 3, 2, 3).transpose(1, 2)
V0 = V0.view(1, 3, 2, 3).transpose(1, 2)
KT0 = K0.transpose(2, 3)
S0 = Q0 @ KT0
case("000[14] Q @ K_T", "matmul", [Q0, KT0], S0)
mask0 = torch.triu(torch.ones(3, 3), diagonal=1).bool()
S0m = S0.masked_fill(mask0, -torch.inf)
case("000[15] masked_fill_(mask, -inf)", "masked_fill", [S0, mask0], S0m, value=-math.inf)
case("000[16] attn_scores / head_dim**0.5", "div_scalar", [S0m], S0m / 3 ** 0.5, s=3 ** 0.5)
W0 = torch.softmax(S0m / 3 ** 0.5, dim=-1)
case("000[16] softmax big scores", "softmax", [S0m / 3 ** 0.5], W0, dim=-1)
ctx0 = (W0 @ V0).transpose(1, 2)
case("000[18] attn_weights @ V", "matmul", [W0, V0], W0 @ V0)
case("000[20] reshape(b, T, H*hd)", "reshape", [ctx0], ctx0.reshape(1, 3, 6), dims=[1, 3, 6])

# ---------------------------------------------------------------- seed 002
data = torch.arange(20 * 10 * 8)
case("002[16] arange(1600)", "arange", [], data, n=1600)
case("002[16] .float()", "float", [data], data.float())
inp = data.float().reshape(20, 10, 8)
case("002[16] .reshape(20, 10, 8)", "reshape", [data.float()], inp, dims=[20, 10, 8])
case("002[18] input_data[:2]", "slice", [inp], inp[:2], dim=0, start=0, end=2)
torch.manual_seed(7)
lq, lk, lv = (torch.nn.Linear(8, 8, bias=False) for _ in range(3))
q2, k2, v2 = lq(inp[:2]), lk(inp[:2]), lv(inp[:2])
case("002[18] wq(input_data[:2])", "linear", [inp[:2], lq.weight], q2)
q2, k2, v2 = (t.reshape(2, 2, 10, 4) for t in (q2, k2, v2))
case("002[22] q.reshape(batch, heads, T, hd)", "reshape", [lq(inp[:2])], q2, dims=[2, 2, 10, 4])
kT2 = k2.transpose(-2, -1)
case("002[33] k.transpose(-2, -1)", "transpose", [k2], kT2, dim0=-2, dim1=-1)
case("002[33] q @ K_transpose", "matmul", [q2, kT2], q2 @ kT2)
sc2 = (q2 @ kT2) / math.sqrt(4)
case("002[33] / sqrt(head_dim)", "div_scalar", [q2 @ kT2], sc2, s=math.sqrt(4))
att2 = torch.softmax(sc2, dim=-1)
case("002[33] softmax", "softmax", [sc2], att2, dim=-1)
case("002[33] attention_score @ v", "matmul", [att2, v2], att2 @ v2)
tr2 = (att2 @ v2).transpose(2, 1)
case("002[41] attention.transpose(2, 1)", "transpose", [att2 @ v2], tr2, dim0=2, dim1=1)
case("002[41] reshape(batch, T, embed)", "reshape", [tr2], tr2.reshape(2, 10, 8), dims=[2, 10, 8])
op2 = torch.nn.Linear(8, 8)
case("002[47] output_projection", "linear", [tr2.reshape(2, 10, 8), op2.weight, op2.bias],
     op2(tr2.reshape(2, 10, 8)))
case("002[81] triu(ones(6, 6), 1).bool()", "bool", [torch.triu(torch.ones(6, 6), 1)],
     torch.triu(torch.ones(6, 6), diagonal=1).bool())
sc4 = torch.tensor([[0.1, 0.3, 0.5, 0.7], [0.2, 0.4, 0.6, 0.8], [0.9, 0.1, 0.2, 0.3], [0.3, 0.4, 0.5, 0.6]])
m4 = torch.triu(torch.ones(4, 4), diagonal=1).bool()
case("002[88] scores.masked_fill(mask, -inf)", "masked_fill", [sc4, m4], sc4.masked_fill(m4, float("-inf")),
     value=-math.inf)
case("002[89] zeros(5, 5).bool()", "bool", [torch.zeros(5, 5)], torch.zeros(5, 5).bool())
case("002 mask.unsqueeze(0)", "unsqueeze", [m4], m4.unsqueeze(0), dim=0)
case("002 mask.unsqueeze(0).unsqueeze(0)", "unsqueeze", [m4.unsqueeze(0)], m4.unsqueeze(0).unsqueeze(0), dim=0)
# Cross attention, small: queries from 3 tokens, keys/values from 5.
torch.manual_seed(11)
qd, ke = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
qx = qd.reshape(2, 3, 2, 4).transpose(1, 2)
kx = ke.reshape(2, 5, 2, 4).transpose(1, 2)
case("002[2] cross: q @ k.T [2 2 3 4]@[2 2 4 5]", "matmul", [qx, kx.transpose(-2, -1)], qx @ kx.transpose(-2, -1))
cm = torch.triu(torch.ones(3, 5), diagonal=1).bool().unsqueeze(0).unsqueeze(0)
case("002[2] cross: triu(ones(T_q, T_k), 1)", "triu", [torch.ones(3, 5)], torch.triu(torch.ones(3, 5), 1), diagonal=1)
sx = (qx @ kx.transpose(-2, -1)).masked_fill(cm, float("-inf"))
case("002[2] cross: masked_fill [1 1 3 5] mask", "masked_fill", [qx @ kx.transpose(-2, -1), cm], sx,
     value=-math.inf)

# ---------------------------------------------------------------- every op, several shapes
# matmul: every torch.matmul case, float32 and int64.
mm = [
    ("1-D . 1-D", (5,), (5,)), ("1-D @ 2-D", (4,), (4, 3)), ("2-D @ 1-D", (3, 4), (4,)),
    ("2-D @ 2-D", (2, 5), (5, 3)), ("3-D @ 3-D", (2, 3, 4), (2, 4, 5)), ("3-D @ 2-D", (2, 3, 4), (4, 2)),
    ("2-D @ 3-D", (3, 4), (2, 4, 5)), ("1-D @ 3-D", (4,), (2, 4, 3)), ("3-D @ 1-D", (2, 3, 4), (4,)),
    ("4-D @ 4-D", (2, 2, 3, 4), (2, 2, 4, 3)), ("batch broadcast", (2, 1, 3, 4), (1, 5, 4, 2)),
    ("batch 1 vs 3", (1, 2, 3), (3, 3, 2)), ("4-D @ 2-D", (2, 3, 2, 4), (4, 1)),
    ("K=16", (3, 16), (16, 4)), ("K=17", (3, 17), (17, 2)), ("K=32", (4, 32), (32, 4)),
    ("K=64 batched", (2, 3, 64), (2, 64, 3)), ("K=256", (2, 256), (256, 3)), ("1-D K=100", (100,), (100,)),
]
for i, (name, sa, sb) in enumerate(mm):
    A, B = f32(*sa, seed=10 + i), f32(*sb, seed=50 + i)
    case(f"matmul {name} {list(sa)}@{list(sb)}", "matmul", [A, B], A @ B)
for i, (name, sa, sb) in enumerate(mm[:12]):
    A, B = i64(*sa, seed=10 + i), i64(*sb, seed=50 + i)
    case(f"matmul int64 {name}", "matmul", [A, B], A @ B)
case("matmul larger [16 40]@[40 24]", "matmul", [f32(16, 40, seed=1), f32(40, 24, seed=2)],
     f32(16, 40, seed=1) @ f32(40, 24, seed=2))
case("dot float32 length 7", "dot", [f32(7, seed=3), f32(7, seed=4)], f32(7, seed=3).dot(f32(7, seed=4)))
case("dot float32 length 300", "dot", [f32(300, seed=3), f32(300, seed=4)], f32(300, seed=3).dot(f32(300, seed=4)))
case("dot int64", "dot", [i64(6, seed=1), i64(6, seed=2)], i64(6, seed=1).dot(i64(6, seed=2)))

# shapes
x234 = f32(2, 3, 4, seed=5)
case("T 2-D int64", "T", [i64(3, 5)], i64(3, 5).T)
case("MT 3-D", "MT", [x234], x234.mT)
for d0, d1 in ((0, 2), (-1, -2), (1, 1), (0, -3)):
    case(f"transpose {d0},{d1}", "transpose", [x234], x234.transpose(d0, d1), dim0=d0, dim1=d1)
case("transpose int64 4-D 1,2", "transpose", [i64(2, 3, 4, 5)], i64(2, 3, 4, 5).transpose(1, 2), dim0=1, dim1=2)
for dims in ([2, 0, 1], [-1, 0, 1], [0, 1, 2]):
    case(f"permute {dims}", "permute", [x234], x234.permute(*dims), dims=dims)
case("permute 4-D bool", "permute", [i64(2, 3, 4, 5) > 0], (i64(2, 3, 4, 5) > 0).permute(0, 2, 1, 3), dims=[0, 2, 1, 3])
for dims in ([4, 6], [-1, 2], [24], [2, 3, 2, 2], [1, 24, 1]):
    case(f"view {dims}", "view", [x234], x234.view(*dims), dims=dims)
case("view one element to 0-d", "view", [torch.tensor([5.0])], torch.tensor([5.0]).view(()), dims=[])
case("reshape int64 -1", "reshape", [i64(3, 4)], i64(3, 4).reshape(-1, 6), dims=[-1, 6])
for d in (0, 1, 3, -1, -4):
    case(f"unsqueeze {d}", "unsqueeze", [x234], x234.unsqueeze(d), dim=d)
case("unsqueeze 0-d", "unsqueeze", [torch.tensor(3.0)], torch.tensor(3.0).unsqueeze(0), dim=0)
x131 = f32(1, 3, 1, seed=6)
for d in (0, 2, -1, 1):
    case(f"squeeze {d}", "squeeze", [x131], x131.squeeze(d), dim=d)
for d in (0, 1, -1, 2, -3):
    case(f"stack dim {d}", "stack", [f32(2, 3, seed=7), f32(2, 3, seed=8), f32(2, 3, seed=9)],
         torch.stack([f32(2, 3, seed=7), f32(2, 3, seed=8), f32(2, 3, seed=9)], dim=d), dim=d)
case("stack mixed int64 float32", "stack", [torch.tensor([1, 2]), torch.tensor([1.5, 2.0])],
     torch.stack([torch.tensor([1, 2]), torch.tensor([1.5, 2.0])]), dim=0)
for d in (0, 1, -1):
    A, B = f32(2, 3, 2, seed=11), f32(2, 3, 2, seed=12)
    case(f"cat dim {d}", "cat", [A, B, A], torch.cat([A, B, A], dim=d), dim=d)
case("cat uneven dim 1", "cat", [f32(2, 1, seed=1), f32(2, 3, seed=2)], torch.cat([f32(2, 1, seed=1), f32(2, 3, seed=2)], 1), dim=1)
case("cat mixed int64 float32", "cat", [torch.tensor([1, 2]), torch.tensor([1.5])],
     torch.cat([torch.tensor([1, 2]), torch.tensor([1.5])]), dim=0)
for i in (0, 1, -1, -2):
    case(f"index {i}", "index", [x234], x234[i], i=i)
case("index 1-D int64", "index", [torch.tensor([4, 5, 6])], torch.tensor([4, 5, 6])[-1], i=-1)
x56 = f32(5, 6, seed=13)
for d, s, e in ((0, 1, 3), (1, -2, 100), (1, 0, 2), (0, -100, 2), (1, 2, -1), (-1, 3, 6), (0, 4, 2)):
    sl = [slice(None)] * 2
    sl[d] = slice(s, e)
    case(f"slice dim {d} [{s}:{e}]", "slice", [x56], x56[tuple(sl)], dim=d, start=s, end=e)

# element-wise arithmetic
bins = [
    ("same shape", f32(2, 3, seed=1), f32(2, 3, seed=2)),
    ("[2 3] and [3]", f32(2, 3, seed=1), f32(3, seed=3)),
    ("[2 1] and [1 3]", f32(2, 1, seed=4), f32(1, 3, seed=5)),
    ("[4 1 3] and [2 1]", f32(4, 1, 3, seed=6), f32(2, 1, seed=7)),
    ("0-d and [3]", f32(1, seed=8).reshape(()), f32(3, seed=9)),
    ("int64", i64(2, 3, seed=1, lo=1), i64(2, 3, seed=2, lo=1)),
    ("int64 and float32", i64(2, 3, seed=3, lo=1), f32(3, seed=4)),
    ("float32 and 0-d float64", f32(3, seed=5), torch.tensor(1.25, dtype=torch.float64)),
    ("int64 and 0-d float64", i64(3, seed=6, lo=1), torch.tensor(1.25, dtype=torch.float64)),
    ("bool and int64", torch.tensor([True, False, True]), torch.tensor([3, 4, 5])),
]
for name, A, B in bins:
    case(f"add {name}", "add", [A, B], A + B)
    if A.dtype != torch.bool and B.dtype != torch.bool:  # PyTorch refuses bool subtraction.
        case(f"sub {name}", "sub", [A, B], A - B)
    case(f"mul {name}", "mul", [A, B], A * B)
    case(f"div {name}", "div", [A, B], A / B)
bb1, bb2 = torch.tensor([True, True, False, False]), torch.tensor([True, False, True, False])
case("add bool bool (or)", "add", [bb1, bb2], bb1 + bb2)
case("mul bool bool (and)", "mul", [bb1, bb2], bb1 * bb2)
case("pow float", "pow", [f32(2, 3, seed=1).abs(), f32(3, seed=2)], f32(2, 3, seed=1).abs() ** f32(3, seed=2))
for s in (2, 0.5, -3, 1e-3):
    xf, xi = f32(2, 3, seed=14), i64(2, 3, seed=14, lo=1)
    case(f"add_scalar {s}", "add_scalar", [xf], xf + s, s=s)
    case(f"add_scalar int64 {s}", "add_scalar", [xi], xi + s, s=s)
    case(f"sub_scalar {s}", "sub_scalar", [xf], xf - s, s=s)
    case(f"mul_scalar {s}", "mul_scalar", [xf], xf * s, s=s)
    case(f"mul_scalar int64 {s}", "mul_scalar", [xi], xi * s, s=s)
    case(f"div_scalar {s}", "div_scalar", [xf], xf / s, s=s)
    case(f"div_scalar int64 {s}", "div_scalar", [xi], xi / s, s=s)
case("pow_scalar 2", "pow_scalar", [f32(2, 3, seed=15)], f32(2, 3, seed=15) ** 2, s=2)
case("pow_scalar 0.5", "pow_scalar", [f32(2, 3, seed=15).abs()], f32(2, 3, seed=15).abs() ** 0.5, s=0.5)
case("pow_scalar int64 2", "pow_scalar", [i64(4, seed=2)], i64(4, seed=2) ** 2, s=2)
case("neg", "neg", [f32(2, 3, seed=16)], -f32(2, 3, seed=16))
case("neg int64", "neg", [i64(4)], -i64(4))
case("abs", "abs", [f32(2, 3, seed=16)], f32(2, 3, seed=16).abs())
case("not", "not", [torch.tensor([True, False])], ~torch.tensor([True, False]))
xe = torch.tensor([[0.0, 1.0, -1.0, 10.0], [-math.inf, 88.0, -100.0, 0.5]])
case("exp with -inf", "exp", [xe], torch.exp(xe))
case("exp int64", "exp", [torch.tensor([0, 1, 2])], torch.exp(torch.tensor([0, 1, 2])))
case("sqrt", "sqrt", [f32(2, 3, seed=17).abs()], torch.sqrt(f32(2, 3, seed=17).abs()))
case("sqrt int64", "sqrt", [torch.tensor([1, 2, 4])], torch.sqrt(torch.tensor([1, 2, 4])))

# reductions
x345 = f32(3, 4, 5, seed=18)
for d in (0, 1, -1):
    for kd in (False, True):
        case(f"sum dim {d} keepdim {kd}", "sum", [x345], x345.sum(dim=d, keepdim=kd), dim=d, keepdim=kd)
        case(f"max dim {d} keepdim {kd}", "max", [x345], x345.max(dim=d, keepdim=kd).values, dim=d, keepdim=kd)
        case(f"mean dim {d} keepdim {kd}", "mean", [x345], x345.mean(dim=d, keepdim=kd), dim=d, keepdim=kd)
        case(f"argmax dim {d} keepdim {kd}", "argmax", [x345], x345.argmax(dim=d, keepdim=kd), dim=d, keepdim=kd)
case("sum int64", "sum", [i64(3, 4)], i64(3, 4).sum(dim=1), dim=1, keepdim=False)
case("sum bool", "sum", [i64(3, 4) > 0], (i64(3, 4) > 0).sum(dim=0), dim=0, keepdim=False)
case("sum_all float32", "sum_all", [x345], x345.sum())
case("sum_all int64", "sum_all", [i64(3, 4)], i64(3, 4).sum())
case("max int64", "max", [i64(3, 4)], i64(3, 4).max(dim=0).values, dim=0, keepdim=False)
case("max with -inf rows", "max", [xe], xe.max(dim=1).values, dim=1, keepdim=False)
case("max_all", "max_all", [x345], x345.max())
case("sum 0-d", "sum", [torch.tensor(5.0)], torch.tensor(5.0).sum(0), dim=0, keepdim=False)

# softmax
for d in (0, 1, -1, -2):
    case(f"softmax 3-D dim {d}", "softmax", [x345], torch.softmax(x345, dim=d), dim=d)
big = torch.tensor([[1000.0, 999.0, -1000.0], [-50.0, 50.0, 0.0]])
case("softmax large logits", "softmax", [big], torch.softmax(big, dim=-1), dim=-1)
minf = torch.tensor([[0.5, -math.inf, 1.5], [-math.inf, -math.inf, -math.inf], [-math.inf, 2.0, -math.inf]])
case("softmax -inf entries and an all -inf row (NaN)", "softmax", [minf], torch.softmax(minf, dim=-1), dim=-1)
case("softmax all -inf column (NaN)", "softmax", [minf], torch.softmax(minf, dim=0), dim=0)
case("softmax 0-d", "softmax", [torch.tensor(5.0)], torch.softmax(torch.tensor(5.0), dim=0), dim=0)

# masked_fill
xm = f32(2, 3, 4, seed=19)
mm3 = f32(2, 3, 4, seed=20) > 0
case("masked_fill same shape", "masked_fill", [xm, mm3], xm.masked_fill(mm3, 0.5), value=0.5)
case("masked_fill [4] mask", "masked_fill", [xm, mm3[0, 0]], xm.masked_fill(mm3[0, 0], -1.0), value=-1.0)
case("masked_fill [3 1] mask -inf", "masked_fill", [xm, mm3[0, :, :1]], xm.masked_fill(mm3[0, :, :1], -math.inf),
     value=-math.inf)
case("masked_fill int64 tensor", "masked_fill", [i64(3, 4), i64(3, 4, seed=3) > 0],
     i64(3, 4).masked_fill(i64(3, 4, seed=3) > 0, 7), value=7)
case("masked_fill numeric mask", "masked_fill", [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1, 0, 2])],
     torch.tensor([1.0, 2.0, 3.0]).masked_fill(torch.tensor([1, 0, 2]).bool(), 9.0), value=9.0)
case("masked_fill mask grows result", "masked_fill", [torch.ones(3), torch.tensor([[True], [False]])],
     torch.ones(3).masked_fill(torch.tensor([[True], [False]]), 0.0), value=0.0)

# creation and conversion
case("zeros 2x3", "zeros", [], torch.zeros(2, 3), dims=[2, 3])
case("full 2x2 -inf", "full", [], torch.full((2, 2), -math.inf), value=-math.inf, dims=[2, 2])
case("full 3 0.25", "full", [], torch.full((3,), 0.25), value=0.25, dims=[3])
case("arange 5", "arange", [], torch.arange(5), n=5)
case("arange 0", "arange", [], torch.arange(0), n=0)
conv = torch.tensor([-1.7, -0.5, 0.0, 0.4, 2.9, 3.0])
case("long truncates toward zero", "long", [conv], conv.long())
case("bool of floats", "bool", [conv], conv.bool())
case("float of bool", "float", [conv.bool()], conv.bool().float())
case("long of bool", "long", [conv.bool()], conv.bool().long())
case("bool of int64", "bool", [torch.tensor([0, 3, -2])], torch.tensor([0, 3, -2]).bool())

# triangles
for d in (-1, 0, 1, 2):
    case(f"triu [3 5] diagonal {d}", "triu", [f32(3, 5, seed=21)], torch.triu(f32(3, 5, seed=21), d), diagonal=d)
    case(f"tril [5 3] diagonal {d}", "tril", [f32(5, 3, seed=22)], torch.tril(f32(5, 3, seed=22), d), diagonal=d)
case("triu batched [2 4 4]", "triu", [f32(2, 4, 4, seed=23)], torch.triu(f32(2, 4, 4, seed=23), 1), diagonal=1)
case("tril int64", "tril", [i64(4, 4)], torch.tril(i64(4, 4)), diagonal=0)
case("triu bool", "triu", [torch.ones(4, 4).bool()], torch.triu(torch.ones(4, 4).bool(), 1), diagonal=1)

# comparisons
case("eq float == 0", "eq", [mask], mask == 0, value=0)
case("eq int64 == 2", "eq", [torch.tensor([[1, 2], [2, 3]])], torch.tensor([[1, 2], [2, 3]]) == 2, value=2)
case("eq int64 == 0.5", "eq", [torch.tensor([0, 1])], torch.tensor([0, 1]) == 0.5, value=0.5)
case("eq float == -inf", "eq", [masked], masked == -math.inf, value=-math.inf)

# linear
for i, (xs, bias) in enumerate((((4,), True), ((2, 4), False), ((2, 3, 4), True), ((5, 4), True))):
    X, Wt, Bt = f32(*xs, seed=30 + i), f32(3, 4, seed=40 + i), f32(3, seed=45 + i)
    ins = [X, Wt] + ([Bt] if bias else [])
    case(f"linear x {list(xs)} bias={bias}", "linear", ins, torch.nn.functional.linear(X, Wt, Bt if bias else None))

# allclose, item
A = f32(2, 3, seed=24)
case("allclose equal", "allclose", [A, A.clone()], True, rtol=1e-05, atol=1e-08)
case("allclose within rtol", "allclose", [A, A * (1 + 5e-6)], torch.allclose(A, A * (1 + 5e-6)), rtol=1e-05, atol=1e-08)
case("allclose outside rtol", "allclose", [A, A * (1 + 5e-4)], torch.allclose(A, A * (1 + 5e-4)), rtol=1e-05, atol=1e-08)
case("allclose broadcast", "allclose", [A, A[0]], torch.allclose(A, A[0]), rtol=1e-05, atol=1e-08)
case("allclose inf", "allclose", [torch.tensor([math.inf, 1.0]), torch.tensor([math.inf, 1.0])], True, rtol=1e-05,
     atol=1e-08)
case("allclose nan", "allclose", [torch.tensor([math.nan]), torch.tensor([math.nan])], False, rtol=1e-05, atol=1e-08)
case("allclose atol", "allclose", [torch.tensor([0.0]), torch.tensor([1e-3])], torch.allclose(torch.tensor([0.0]),
     torch.tensor([1e-3]), atol=1e-2), rtol=1e-05, atol=1e-2)
case("item float", "item", [torch.tensor(0.9544000625610352)], torch.tensor(0.9544000625610352).item())
case("item one-element", "item", [torch.tensor([[7]])], torch.tensor([[7]]).item())

json.dump({"generator": "testdata/gen_goldens.py", "torch": torch.__version__, "cases": cases},
          sys.stdout, indent=None, separators=(",", ":"))
sys.stdout.write("\n")
