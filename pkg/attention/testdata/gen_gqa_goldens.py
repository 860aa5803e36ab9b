#!/usr/bin/python3
"""Regenerates gqa_goldens.json: PyTorch's numbers for the KV cache and grouped-query attention
(notebook 11, pkg/attention's gqa.go, pkg/gpt's cache).

Run with Debian's PyTorch (python3-torch 1.13, x86-64) on the reference BLAS, the numbers of
the seed documents (where Debian's OpenBLAS is the system's libblas.so.3, as it is once
libopenblas0-pthread is installed, products are summed in another order and the last bits move):

    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas /usr/bin/python3 \
        pkg/attention/testdata/gen_gqa_goldens.py > pkg/attention/testdata/gqa_goldens.json

(or `go test ./pkg/attention/ -update`, which runs this script so). The classes
are written as the book's bonus code writes them (LLMs-from-scratch, ch04/03_kv-cache: a cache
buffer, torch.cat of the new keys and values, the mask sliced at ptr_current_pos; ch04/04_gqa:
W_key and W_value of num_kv_groups heads, repeat_interleave before the attention), on chapter 3's
CausalAttention and MultiHeadAttention, so that torch.manual_seed decides the same weights as in
the seed documents.

Every float32 is written with Python's shortest repr of its float64 value; inf/-inf/nan are
the strings "inf", "-inf", "nan".
"""
import json
import math
import sys

import torch
import torch.nn as nn

torch.set_num_threads(1)
OUT = {}


def put(name, t):
    """Stores tensor t (any shape) under name."""
    if name in OUT:
        raise KeyError(name)
    t = t.detach().to(torch.float32)
    flat = []
    for v in t.reshape(-1).tolist():
        if math.isnan(v):
            flat.append("nan")
        elif math.isinf(v):
            flat.append("inf" if v > 0 else "-inf")
        else:
            flat.append(v)
    OUT[name] = {"shape": list(t.shape), "data": flat}


# ----------------------------------------------------------------------------------------------
# Chapter 3's CausalAttention with the bonus code's KV cache.

class CausalAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))
        ####################################################
        # NEW
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0
        ####################################################

    def forward(self, x, use_cache=False):
        b, num_tokens, d_in = x.shape
        keys_new = self.W_key(x)
        values_new = self.W_value(x)
        queries = self.W_query(x)

        ####################################################
        # NEW
        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
            keys, values = self.cache_k, self.cache_v
        else:
            keys, values = keys_new, values_new
        ####################################################

        attn_scores = queries @ keys.transpose(1, 2)

        ####################################################
        # NEW
        num_tokens_Q = queries.shape[-2]
        num_tokens_K = keys.shape[-2]
        if use_cache:
            mask_bool = self.mask.bool()[
                self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K
            ]
            self.ptr_current_pos += num_tokens_Q
        else:
            mask_bool = self.mask.bool()[:num_tokens_Q, :num_tokens_K]
        ####################################################

        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = attn_weights @ values
        return context_vec

    ####################################################
    # NEW
    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0
    ####################################################


# ----------------------------------------------------------------------------------------------
# The bonus code's GroupedQueryAttention (ch04/04_gqa), with its KV cache.

class GroupedQueryAttention(nn.Module):

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        assert num_heads % num_kv_groups == 0, "num_heads must be divisible by num_kv_groups"

        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.num_kv_groups = num_kv_groups
        self.group_size = num_heads // num_kv_groups

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0

    def forward(self, x, use_cache=False):
        b, num_tokens, d_in = x.shape

        queries = self.W_query(x)  # Shape: (b, num_tokens, d_out)
        keys_new = self.W_key(x)  # Shape: (b, num_tokens, num_kv_groups * head_dim)
        values_new = self.W_value(x)  # Shape: (b, num_tokens, num_kv_groups * head_dim)

        # Reshape queries, keys, and values
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        keys_new = keys_new.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)
        values_new = values_new.view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)

        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=2)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=2)
            keys_base, values_base = self.cache_k, self.cache_v
        else:
            keys_base, values_base = keys_new, values_new

        # Expand keys and values to match the number of heads
        # Shape: (b, num_heads, num_tokens, head_dim)
        keys = keys_base.repeat_interleave(self.group_size, dim=1)  # Shape: (b, num_heads, num_tokens, head_dim)
        values = values_base.repeat_interleave(self.group_size, dim=1)  # Shape: (b, num_heads, num_tokens, head_dim)
        # For example, before repeat_interleave along dim=1 (query groups):
        #   [K1, K2]
        # After repeat_interleave (each query group is repeated group_size times):
        #   [K1, K1, K2, K2]

        # Compute scaled dot-product attention (aka self-attention) with a causal mask
        # Shape: (b, num_heads, num_tokens, num_tokens)
        attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head

        # Create mask on the fly: query i (at position ptr_current_pos + i) sees keys up to it
        num_tokens_Q = queries.shape[-2]
        num_tokens_K = keys.shape[-2]
        if use_cache:
            q_positions = torch.arange(self.ptr_current_pos, self.ptr_current_pos + num_tokens_Q, dtype=torch.long)
            self.ptr_current_pos += num_tokens_Q
        else:
            q_positions = torch.arange(num_tokens_Q, dtype=torch.long)
            self.ptr_current_pos = 0
        k_positions = torch.arange(num_tokens_K, dtype=torch.long)
        mask = q_positions.unsqueeze(-1) < k_positions.unsqueeze(0)

        # Use the mask to fill attention scores
        attn_scores = attn_scores.masked_fill(mask, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        assert keys.shape[-1] == self.head_dim
        attn_weights = self.dropout(attn_weights)

        # Shape: (b, num_tokens, num_heads, head_dim)
        context_vec = (attn_weights @ values).transpose(1, 2)

        # Combine heads, where self.d_out = self.num_heads * self.head_dim
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)  # optional projection

        return context_vec

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
        self.ptr_current_pos = 0


# ----------------------------------------------------------------------------------------------
# 1. The seeds' small example, step by step with the cache and all at once.

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your     (x^1)
     [0.55, 0.87, 0.66],  # journey  (x^2)
     [0.57, 0.85, 0.64],  # starts   (x^3)
     [0.22, 0.58, 0.33],  # with     (x^4)
     [0.77, 0.25, 0.10],  # one      (x^5)
     [0.05, 0.80, 0.55]]  # step     (x^6)
)
torch.manual_seed(123)
ca = CausalAttention(3, 2, 6, 0.0)
ca.eval()
batch = torch.stack((inputs, inputs), dim=0)  # the seeds' batch of two copies
with torch.no_grad():
    full = ca(batch)
    ca.reset_cache()
    steps = [ca(batch[:, i:i + 1], use_cache=True) for i in range(6)]
put("kv/W_query", ca.W_query.weight)
put("kv/W_key", ca.W_key.weight)
put("kv/W_value", ca.W_value.weight)
put("kv/full", full[0])
put("kv/steps", torch.cat(steps, dim=1)[0])
put("kv/cache_k", ca.cache_k[0])
put("kv/cache_v", ca.cache_v[0])

# ----------------------------------------------------------------------------------------------
# 2. GQA (4 query heads, 2 key/value heads) and MQA (1 key/value head): forward, and the cached
# steps of the same module.

torch.manual_seed(123)
x = torch.randn(2, 6, 8)
put("gqa/x", x)
for name, groups in (("gqa", 2), ("mqa", 1), ("mha", 4)):
    torch.manual_seed(123)
    m = GroupedQueryAttention(8, 8, 6, 0.0, num_heads=4, num_kv_groups=groups)
    m.eval()
    with torch.no_grad():
        out = m(x)
        m.reset_cache()
        steps = [m(x[:, i:i + 1], use_cache=True) for i in range(6)]
    for k, v in m.named_parameters():
        put(name + "/" + k, v)
    put(name + "/out", out)
    put(name + "/steps", torch.cat(steps, dim=1))
    put(name + "/cache_k", m.cache_k)

json.dump({"torch": torch.__version__, "tensors": OUT}, sys.stdout, indent=None, separators=(",", ":"))
sys.stdout.write("\n")
