#!/usr/bin/python3
"""Regenerates goldens.json: PyTorch's numbers for every computation in pkg/attention.

Run with Debian's PyTorch (python3-torch 1.13, x86-64, no MKL), the build whose random stream
pkg/torchrand reproduces and whose numbers the seed documents print:

    /usr/bin/python3 pkg/attention/testdata/gen_goldens.py > pkg/attention/testdata/goldens.json

(or `go test ./pkg/attention/ -update`, which runs this script first). The classes below are
copied from the seed documents (seeds 000-004) with their construction and call order unchanged:
that order decides which random numbers each weight and dropout mask gets.

Every float32 is written with Python's shortest repr of its float64 value, so it parses back to
the same float32 bits; inf/-inf/nan are written as the strings "inf", "-inf", "nan".
"""
import json
import math
import sys

import torch
import torch.nn as nn

torch.set_num_threads(1)
OUT = {}


def put(name, t):
    """Stores tensor t (any shape, float or bool) under name."""
    if name in OUT:
        raise KeyError(name)
    t = t.detach()
    if t.dtype == torch.bool:
        t = t.float()
    t = t.to(torch.float32)
    flat = []
    for v in t.reshape(-1).tolist():
        if math.isnan(v):
            flat.append("nan")
        elif math.isinf(v):
            flat.append("inf" if v > 0 else "-inf")
        else:
            flat.append(v)
    OUT[name] = {"shape": list(t.shape), "data": flat}


def put_params(prefix, module):
    for k, v in module.named_parameters():
        put(prefix + "/" + k, v)


def dropout_masks(shapes, p):
    """The masks PyTorch's nn.Dropout(p) draws next for tensors of these shapes, without moving
    the global generator: forward calls that follow draw exactly these."""
    state = torch.get_rng_state()
    masks = [nn.functional.dropout(torch.ones(*s), p, training=True) for s in shapes]
    torch.set_rng_state(state)
    return masks


# ----------------------------------------------------------------------------------------------
# Seed 001 — simplified attention, self-attention, causal, dropout, multi-head.
inputs = torch.tensor([
    [0.43, 0.15, 0.89],
    [0.55, 0.87, 0.66],
    [0.57, 0.85, 0.64],
    [0.22, 0.58, 0.33],
    [0.77, 0.25, 0.10],
    [0.05, 0.80, 0.55],
])
put("s001/inputs", inputs)

query = inputs[1]
attn_scores_2 = torch.empty(inputs.shape[0])
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = x_i.dot(query)
put("s001/attn_scores_2", attn_scores_2)
put("s001/attn_weights_2_tmp", attn_scores_2 / attn_scores_2.sum())


def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


attn_weights_2 = softmax_naive(attn_scores_2)
put("s001/softmax_naive_2", attn_weights_2)
put("s001/softmax_2", torch.softmax(attn_scores_2, dim=0))
context_vec_2 = torch.zeros(query.shape)
for i, x_i in enumerate(inputs):
    context_vec_2 += attn_weights_2[i] * x_i
put("s001/context_vec_2", context_vec_2)

attn_scores = inputs @ inputs.T
put("s001/attn_scores", attn_scores)
put("s001/inputsT_inputs", inputs.T @ inputs)
attn_weights = torch.softmax(attn_scores, dim=1)
put("s001/attn_weights", attn_weights)
put("s001/all_context_vecs", attn_weights @ inputs)

# Trainable weights, one query.
x_2 = inputs[1]
d_in, d_out = inputs.shape[1], 2
torch.manual_seed(123)
W_query = torch.rand(d_in, d_out)
W_key = torch.rand(d_in, d_out)
W_value = torch.rand(d_in, d_out)
put("s001/rand123/W_query", W_query)
put("s001/rand123/W_key", W_key)
put("s001/rand123/W_value", W_value)
query_2 = x_2 @ W_query
keys = inputs @ W_key
values = inputs @ W_value
queries = inputs @ W_query
put("s001/rand123/query_2", query_2)
put("s001/rand123/keys", keys)
put("s001/rand123/values", values)
attn_scores_2 = query_2 @ keys.T
put("s001/rand123/attn_scores_2", attn_scores_2)
put("s001/rand123/all_scores", queries @ keys.T)
d_k = keys.shape[-1]
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)
put("s001/rand123/attn_weights_2", attn_weights_2)
put("s001/rand123/context_vec_2", attn_weights_2 @ values)


class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        queries = x @ self.W_query
        values = x @ self.W_value
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


torch.manual_seed(123)
sa_v1 = SelfAttention_v1(d_in, d_out)
put_params("s001/sa_v1", sa_v1)
put("s001/sa_v1/out", sa_v1(inputs))


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


torch.manual_seed(789)
sa_v2 = SelfAttention_v2(d_in, d_out)
put_params("s001/sa_v2", sa_v2)
put("s001/sa_v2/out", sa_v2(inputs))

torch.manual_seed(789)
sa_v2b = SelfAttention_v2(d_in, d_out, qkv_bias=True)
put_params("s001/sa_v2_bias", sa_v2b)
put("s001/sa_v2_bias/out", sa_v2b(inputs))

# Causal masks, both ways (cells 22-49).
queries = sa_v2.W_query(inputs)
keys = sa_v2.W_key(inputs)
attn_scores = queries @ keys.T
put("s001/causal/scores", attn_scores)
attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
put("s001/causal/weights", attn_weights)
context_length = attn_scores.shape[0]
mask_simple = torch.tril(torch.ones(context_length, context_length))
masked_simple = attn_weights * mask_simple
put("s001/causal/masked_simple", masked_simple)
row_sums = masked_simple.sum(dim=-1, keepdim=True)
put("s001/causal/masked_simple_norm", masked_simple / row_sums)
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
put("s001/causal/masked", masked)
put("s001/causal/masked_weights", torch.softmax(masked / keys.shape[-1] ** 0.5, dim=1))

# Dropout on ones (cell 56).
torch.manual_seed(123)
put("s001/dropout05_ones", torch.nn.Dropout(0.5)(torch.ones(6, 6)))


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        self.last_weights = attn_weights
        attn_weights = self.dropout(attn_weights)
        self.last_dropped = attn_weights
        return attn_weights @ values


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        self.last_weights = attn_weights
        attn_weights = self.dropout(attn_weights)
        self.last_dropped = attn_weights
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


batch = torch.stack((inputs, inputs), dim=0)
put("s001/batch", batch)

torch.manual_seed(123)
ca = CausalAttention(d_in, d_out, batch.shape[1], 0.0)
put_params("s001/ca", ca)
put("s001/ca/out", ca(batch))
put("s001/ca/weights", ca.last_weights)

# CausalAttention with dropout 0.5 in training mode: the mask is drawn at call time.
torch.manual_seed(123)
ca = CausalAttention(d_in, d_out, batch.shape[1], 0.5)
put_params("s001/ca_drop", ca)
put("s001/ca_drop/mask", dropout_masks([(2, 6, 6)], 0.5)[0])
put("s001/ca_drop/out", ca(batch))
put("s001/ca_drop/weights", ca.last_weights)
put("s001/ca_drop/dropped", ca.last_dropped)
ca.eval()
put("s001/ca_drop/eval_out", ca(batch))

torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in, d_out, batch.shape[1], 0.0, num_heads=2)
put_params("s001/wrapper", mha)
put("s001/wrapper/out", mha(batch))

torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in, d_out, batch.shape[1], 0.5, num_heads=2)
put("s001/wrapper_drop/mask", torch.stack(dropout_masks([(2, 6, 6), (2, 6, 6)], 0.5), dim=1))
put("s001/wrapper_drop/out", mha(batch))

torch.manual_seed(123)
mha = MultiHeadAttention(d_in, 2, batch.shape[1], 0.0, num_heads=2)
put_params("s001/mha", mha)
put("s001/mha/out", mha(batch))
put("s001/mha/weights", mha.last_weights)

# ----------------------------------------------------------------------------------------------
# Seed 000 — wrapper on other inputs, the step-by-step multi-head walk-through, MHA + dropout.
inputs0 = torch.tensor([
    [0.72, 0.45, 0.31],
    [0.75, 0.20, 0.55],
    [0.30, 0.80, 0.40],
    [0.85, 0.35, 0.60],
    [0.55, 0.15, 0.75],
    [0.25, 0.20, 0.85],
])
batch0 = torch.stack((inputs0, inputs0), dim=0)
put("s000/batch", batch0)
torch.manual_seed(123)
mha = MultiHeadAttentionWrapper(d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2)
put_params("s000/wrapper", mha)
put("s000/wrapper/out", mha(batch0))

x = torch.tensor([[
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    [6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
]])
put("s000/x", x)
batch_size, seq_len, d_model = x.shape
torch.manual_seed(0)
Wq = torch.randn(d_model, d_model)
Wk = torch.randn(d_model, d_model)
Wv = torch.randn(d_model, d_model)
put("s000/walk/Wq", Wq)
put("s000/walk/Wk", Wk)
put("s000/walk/Wv", Wv)
Q, K, V = x @ Wq, x @ Wk, x @ Wv
put("s000/walk/Q", Q)
put("s000/walk/K", K)
put("s000/walk/V", V)
num_heads = 2
head_dim = d_model // num_heads
Qh = Q.view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2)
Kh = K.view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2)
Vh = V.view(batch_size, seq_len, num_heads, head_dim).transpose(1, 2)
put("s000/walk/Qh", Qh)
put("s000/walk/Kh", Kh)
put("s000/walk/Vh", Vh)
attn_scores = Qh @ Kh.transpose(2, 3)
put("s000/walk/scores", attn_scores)
mask = torch.triu(torch.ones(seq_len, seq_len), diagonal=1).bool()
attn_scores.masked_fill_(mask, -torch.inf)
put("s000/walk/masked_scores", attn_scores)
attn_weights = torch.softmax(attn_scores / head_dim**0.5, dim=-1)
put("s000/walk/weights", attn_weights)
put("s000/walk/dropout_mask", dropout_masks([tuple(attn_weights.shape)], 0.1)[0])
attn_weights = nn.Dropout(0.1)(attn_weights)
put("s000/walk/dropped", attn_weights)
context_vec = attn_weights @ Vh
put("s000/walk/context_heads", context_vec)
context_vec = context_vec.transpose(1, 2).reshape(batch_size, seq_len, num_heads * head_dim)
put("s000/walk/context", context_vec)

torch.manual_seed(123)
mha = MultiHeadAttention(d_in=6, d_out=6, context_length=seq_len, dropout=0.1, num_heads=2)
put_params("s000/mha", mha)
put("s000/mha/mask", dropout_masks([(1, 2, 3, 3)], 0.1)[0])
put("s000/mha/out", mha(x))
put("s000/mha/weights", mha.last_weights)
put("s000/mha/dropped", mha.last_dropped)
mha.eval()
put("s000/mha/eval_out", mha(x))

# Batch 2 with bias, fewer tokens than the context length, several heads.
torch.manual_seed(5)
mha = MultiHeadAttention(d_in=5, d_out=8, context_length=7, dropout=0.25, num_heads=4, qkv_bias=True)
put_params("s000/mha_b", mha)
xb = torch.rand(3, 6, 5)
put("s000/mha_b/x", xb)
put("s000/mha_b/mask", dropout_masks([(3, 4, 6, 6)], 0.25)[0])
put("s000/mha_b/out", mha(xb))
mha.eval()
put("s000/mha_b/eval_out", mha(xb))

# ----------------------------------------------------------------------------------------------
# Seed 002 — reshape without transpose (the wrong split), cross attention.
torch.manual_seed(42)
n, seq_len, embed_dim, batch, no_head = 20, 10, 8, 2, 2
input_data = torch.arange(n * seq_len * embed_dim).float().reshape(n, seq_len, embed_dim)
wq = nn.Linear(embed_dim, embed_dim, bias=False)
wk = nn.Linear(embed_dim, embed_dim, bias=False)
wv = nn.Linear(embed_dim, embed_dim, bias=False)
put("s002/wq", wq.weight)
put("s002/wk", wk.weight)
put("s002/wv", wv.weight)
q, k, v = wq(input_data[:2]), wk(input_data[:2]), wv(input_data[:2])
put("s002/q", q)
q = q.reshape(batch, no_head, seq_len, embed_dim // no_head)
k = k.reshape(batch, no_head, seq_len, embed_dim // no_head)
v = v.reshape(batch, no_head, seq_len, embed_dim // no_head)
put("s002/q_heads_no_transpose", q)
head_dim = embed_dim // no_head
attention_score = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(head_dim), dim=-1)
put("s002/no_transpose/weights", attention_score)
attention = attention_score @ v
put("s002/no_transpose/attention", attention)
attention = attention.transpose(2, 1).reshape(batch, seq_len, embed_dim)
put("s002/no_transpose/merged", attention)


class CrossMultiHeadAttention(nn.Module):
    """Seed 002's final MultiHeadAttention (query, key and value inputs; causal mask at call)."""

    def __init__(self, num_heads, embed_dim, bias=False):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.num_heads = num_heads
        self.embed_dim = embed_dim
        self.head_dim = self.embed_dim // self.num_heads
        self.wq = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.wk = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.wv = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.output_projection = nn.Linear(self.embed_dim, self.embed_dim)

    def forward(self, q_input, k_input=None, v_input=None, mask=False):
        batch = q_input.size(0)
        if k_input is None:
            k_input = q_input
        if v_input is None:
            v_input = q_input
        q = self.wq(q_input)
        k = self.wk(k_input)
        v = self.wv(v_input)
        T_q, T_k = q_input.size(1), k_input.size(1)
        q = q.reshape(batch, T_q, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(batch, T_k, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(batch, T_k, self.num_heads, self.head_dim).transpose(1, 2)
        score = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.ones(T_q, T_k), diagonal=1).bool() if mask else torch.zeros(T_q, T_k).bool()
        mask = mask.unsqueeze(0).unsqueeze(0)
        score = score.masked_fill(mask, float("-inf"))
        attention_score = torch.softmax(score, dim=-1)
        self.last_weights = attention_score
        attention = attention_score @ v
        attention = attention.transpose(1, 2).reshape(batch, T_q, self.embed_dim)
        return self.output_projection(attention)


torch.manual_seed(7)
cross = CrossMultiHeadAttention(num_heads=2, embed_dim=8, bias=True)
put_params("s002/cross", cross)
dec = torch.randn(2, 5, 8)
enc = torch.randn(2, 7, 8)
put("s002/cross/dec", dec)
put("s002/cross/enc", enc)
put("s002/cross/self_out", cross(dec))
put("s002/cross/self_causal_out", cross(dec, mask=True))
put("s002/cross/cross_out", cross(dec, enc, enc))
put("s002/cross/cross_weights", cross.last_weights)
put("s002/cross/cross_causal_out", cross(dec, enc, enc, mask=True))
put("s002/cross/cross_causal_weights", cross.last_weights)
enc_v = torch.randn(2, 7, 8)
put("s002/cross/enc_v", enc_v)
put("s002/cross/cross_kv_out", cross(dec, enc, enc_v))

torch.manual_seed(11)
cross4 = CrossMultiHeadAttention(num_heads=4, embed_dim=8, bias=False)
put_params("s002/cross4", cross4)
put("s002/cross4/cross_out", cross4(dec, enc, enc_v))

# ----------------------------------------------------------------------------------------------
# Seed 003 — config-driven AttentionHead and the head-list MultiHeadAttention (small config).
config = {
    "vocabulary_size": 65,
    "context_size": 8,
    "embedding_dim": 12,
    "heads_num": 3,
    "layers_num": 2,
    "dropout_rate": 0.1,
    "use_bias": False,
}
config["head_size"] = config["embedding_dim"] // config["heads_num"]


class AttentionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.Q_weights = nn.Linear(config["embedding_dim"], config["head_size"], bias=config["use_bias"])
        self.K_weights = nn.Linear(config["embedding_dim"], config["head_size"], bias=config["use_bias"])
        self.V_weights = nn.Linear(config["embedding_dim"], config["head_size"], bias=config["use_bias"])
        self.dropout = nn.Dropout(config["dropout_rate"])
        casual_attention_mask = torch.tril(torch.ones(config["context_size"], config["context_size"]))
        self.register_buffer('casual_attention_mask', casual_attention_mask)

    def forward(self, input_embeddings):
        batch_size, tokens_num, embedding_dim = input_embeddings.shape
        Q = self.Q_weights(input_embeddings)
        K = self.K_weights(input_embeddings)
        V = self.V_weights(input_embeddings)
        attention_scores = Q @ K.transpose(1, 2)
        attention_scores = attention_scores.masked_fill(
            self.casual_attention_mask[:tokens_num, :tokens_num] == 0, -torch.inf)
        attention_scores = attention_scores / (K.shape[-1] ** 0.5)
        attention_scores = torch.softmax(attention_scores, dim=-1)
        self.last_weights = attention_scores
        attention_scores = self.dropout(attention_scores)
        return attention_scores @ V


class HeadListMultiHeadAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        heads_list = [AttentionHead(config) for _ in range(config["heads_num"])]
        self.heads = nn.ModuleList(heads_list)
        self.linear = nn.Linear(config["embedding_dim"], config["embedding_dim"])
        self.dropout = nn.Dropout(config["dropout_rate"])

    def forward(self, input_embeddings):
        heads_outputs = [head(input_embeddings) for head in self.heads]
        concatenated_heads = torch.cat(heads_outputs, dim=-1)
        projected_output = self.linear(concatenated_heads)
        return self.dropout(projected_output)


torch.manual_seed(0)
inp = torch.rand(2, 6, config["embedding_dim"])
put("s003/input", inp)
ah = AttentionHead(config)
put_params("s003/head", ah)
put("s003/head/mask", dropout_masks([(2, 6, 6)], 0.1)[0])
put("s003/head/out", ah(inp))
put("s003/head/weights", ah.last_weights)
mha = HeadListMultiHeadAttention(config)
put_params("s003/mha", mha)
masks = dropout_masks([(2, 6, 6)] * 3 + [(2, 6, 12)], 0.1)
put("s003/mha/head_masks", torch.stack(masks[:3], dim=1))
put("s003/mha/out_mask", masks[3])
put("s003/mha/out", mha(inp))
mha.eval()
put("s003/mha/eval_out", mha(inp))
ah.eval()
put("s003/head/eval_out", ah(inp))

# ----------------------------------------------------------------------------------------------
# Softmax overflow: exp(89) is +inf in float32, so the naive softmax gives NaN.
big = torch.tensor([89.0, 1.0, 2.0])
put("overflow/scores", big)
put("overflow/exp", torch.exp(big))
put("overflow/naive", softmax_naive(big))
put("overflow/stable", torch.softmax(big, dim=0))
put("overflow/exp88", torch.exp(torch.tensor([88.0, 88.7, 88.8])))

# Parameter counts.
counts = {
    "gpt2_mha": sum(p.numel() for p in MultiHeadAttention(768, 768, 1024, 0.0, 12).parameters()),
    "seed001_mha": sum(p.numel() for p in MultiHeadAttention(3, 2, 6, 0.0, 2).parameters()),
    "seed003_full_headlist": sum(p.numel() for p in HeadListMultiHeadAttention(
        dict(config, context_size=256, embedding_dim=768, heads_num=12, head_size=64)).parameters()),
}

json.dump({"torch": torch.__version__, "counts": counts, "tensors": OUT}, sys.stdout, indent=None, separators=(",", ":"))
sys.stdout.write("\n")
