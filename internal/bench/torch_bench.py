# PyTorch side of attnbook's bench (internal/bench, `go run ./kernel bench`).
#
# The Go runner starts this script once and talks to it in JSON lines, one request on stdin, one
# reply on stdout, so the process (and PyTorch's thread pool) stays alive across the interleaved
# rounds:
#
#   {"cmd": "setup", "batch": 8, "tokens": 1024, "dim": 768, "heads": 12, "seed": 123,
#    "threads": 2, "device": "cpu"}
#       -> {"ok": true, "torch": "1.13.1", "impls": [...], "notes": [...], "check": {...},
#           "seconds": {...}, "reference": {...}}  (check: each formulation's forward output vs
#           the chapter's; seconds: how long that first forward call took)
#   {"cmd": "run", "impl": "chapter", "mode": "forward"}  -> {"ok": true, "seconds": 0.123}
#   {"cmd": "info", "threads": 2}  -> {"ok": true, "torch": "1.13.1", "blas": [...], ...}
#   {"cmd": "matmul", "n": 1024}  -> {"ok": true, "seconds": 0.05}  ((a @ b).sum() of two [n, n] float32)
#   {"cmd": "quit"}
#
# The Go side starts it twice on CPU: as Debian installs it (libblas.so.3, the reference BLAS) and
# with LD_LIBRARY_PATH pointing at OpenBLAS's libblas.so.3; "blas" in the replies lists the BLAS
# libraries actually mapped into the process (/proc/self/maps), so a table never claims OpenBLAS
# that was not loaded ("blas_config": OpenBLAS's own build string and the core it picked). It runs
# on the host's PyTorch (Debian bookworm: 1.13) and, the same twice, in the current-PyTorch
# container (docker/torch/Dockerfile: Debian trixie's 2.6, where "fused" has F.scaled_dot_product_attention).
#
# Errors are replies too: {"ok": false, "error": "..."}. The input and the weights are drawn as the
# Go side draws them (pkg/torchrand reproduces PyTorch's generator bit for bit):
# torch.manual_seed(seed); x = torch.randn(b, T, d); MultiHeadAttention(d, d, T, 0.0, h).
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    """The chapter's CausalAttention, dropout 0."""

    def __init__(self, d_in, d_out, context_length, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values


class Wrapper(nn.Module):
    """MultiHeadAttentionWrapper + out_proj (the bonus material's Ch03_MHA_Wrapper)."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out // num_heads, context_length, qkv_bias) for _ in range(num_heads)])
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        return self.out_proj(torch.cat([head(x) for head in self.heads], dim=-1))


class MultiHeadAttention(nn.Module):
    """The chapter's vectorized MultiHeadAttention, dropout 0."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class CombinedQKV(nn.Module):
    """One [3d, d] projection, view + permute + unbind (the bonus material's MultiHeadAttentionCombinedQKV)."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, num_tokens, _ = x.shape
        qkv = self.qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.proj(context_vec)


class Einsums(nn.Module):
    """Every product an einsum, weights per head [H, hd, d] (the Go einsum formulation)."""

    def __init__(self, d_in, d_out, context_length, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        shape = (num_heads, self.head_dim, d_in)
        self.W_query = nn.Parameter(torch.empty(shape))
        self.W_key = nn.Parameter(torch.empty(shape))
        self.W_value = nn.Parameter(torch.empty(shape))
        self.W_out = nn.Parameter(torch.empty(d_out, num_heads, self.head_dim))
        self.b_out = nn.Parameter(torch.empty(d_out))
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        num_tokens = x.shape[1]
        queries = torch.einsum("btd,hkd->bhtk", x, self.W_query)
        keys = torch.einsum("btd,hkd->bhtk", x, self.W_key)
        values = torch.einsum("btd,hkd->bhtk", x, self.W_value)
        scores = torch.einsum("bhqk,bhsk->bhqs", queries, keys)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        context = torch.einsum("bhqs,bhsk->bqhk", weights, values)
        return torch.einsum("bqhk,ohk->bqo", context, self.W_out) + self.b_out


class TorchMHA(nn.Module):
    """nn.MultiheadAttention(batch_first=True), need_weights=False, boolean causal mask."""

    def __init__(self, d, context_length, num_heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(d, num_heads, bias=True, batch_first=True)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        t = x.shape[1]
        return self.mha(x, x, x, attn_mask=self.mask[:t, :t], need_weights=False)[0]


FAST_BLOCK = 128  # pkg/attention's fastBlock


class Fast(nn.Module):
    """pkg/attention's fast formulation (MultiHeadAttention.SetFast) in PyTorch: 1/sqrt(hd) folded
    into W_query, queries in blocks of 128 tokens that only meet the keys up to their block's end,
    an additive 0/-inf bias, and a softmax per block."""

    def __init__(self, d, context_length, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d // num_heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        qkv = self.qkv(x).view(b, t, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)  # [B, H, T, hd], q already scaled
        parts = []
        for start in range(0, t, FAST_BLOCK):
            end = min(start + FAST_BLOCK, t)
            scores = q[:, :, start:end] @ k[:, :, :end].transpose(-2, -1)
            future = torch.arange(end, device=x.device)[None, :] > torch.arange(start, end, device=x.device)[:, None]
            scores = scores + torch.zeros(end - start, end, device=x.device).masked_fill(future, -torch.inf)
            parts.append(torch.softmax(scores, dim=-1) @ v[:, :, :end])
        context = torch.cat(parts, dim=2).transpose(1, 2).reshape(b, t, d)
        return self.proj(context)


class SDPA(nn.Module):
    """F.scaled_dot_product_attention(is_causal=True) (PyTorch >= 2.0)."""

    def __init__(self, d, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d // num_heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
        context = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=True)
        return self.proj(context.transpose(1, 2).reshape(b, t, d))


def blas_libraries():
    """The BLAS libraries mapped into this process (Linux), e.g. .../openblas-pthread/libblas.so.3."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                name = path.rsplit("/", 1)[-1]
                if "blas" in name or "lapack" in name:
                    libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def blas_config(libs):
    """OpenBLAS's own description of the build loaded, e.g. "OpenBLAS 0.3.29 DYNAMIC_ARCH NO_AFFINITY
    SkylakeX MAX_THREADS=64 (core SkylakeX)", from openblas_get_config() and openblas_get_corename();
    "" when the libblas.so.3 loaded is not OpenBLAS."""
    import ctypes
    for path in libs:
        if "libblas.so.3" not in path:
            continue
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            core = lib.openblas_get_corename().decode().strip()
            note = coretype_note()
            if note:
                core += ", " + note
            return "%s (core %s)" % (lib.openblas_get_config().decode().strip(), core)
        except (OSError, AttributeError):
            return ""
    return ""


def info(req):
    torch.set_num_threads(int(req["threads"]))
    libs = blas_libraries()
    return {"ok": True, "torch": torch.__version__, "python": sys.version.split()[0],
            "threads": torch.get_num_threads(), "blas": libs, "blas_config": blas_config(libs),
            "config": torch.__config__.show()}


class Matmul:
    """Two [n, n] float32 matrices; run times (a @ b).sum().item()."""

    def __init__(self):
        self.mats = {}

    def run(self, n):
        if n not in self.mats:
            g = torch.Generator().manual_seed(n)
            self.mats = {n: (torch.randn(n, n, generator=g), torch.randn(n, n, generator=g))}
        a, b = self.mats[n]
        start = time.perf_counter()
        (a @ b).sum().item()
        return time.perf_counter() - start


class Bench:
    def __init__(self, req):
        self.b, self.t, self.d, self.h = req["batch"], req["tokens"], req["dim"], req["heads"]
        self.device = torch.device(req.get("device", "cpu"))
        torch.set_num_threads(int(req["threads"]))
        b, t, d, h, hd = self.b, self.t, self.d, self.h, self.d // self.h
        torch.manual_seed(int(req["seed"]))
        x = torch.randn(b, t, d)
        ref = MultiHeadAttention(d, d, t, h)  # draws W_query, W_key, W_value, out_proj
        wq, wk, wv = ref.W_query.weight.data, ref.W_key.weight.data, ref.W_value.weight.data
        wo, bo = ref.out_proj.weight.data, ref.out_proj.bias.data

        self.notes = []
        mods = {"chapter": ref}
        with torch.no_grad():
            m = Wrapper(d, d, t, h)
            for i, head in enumerate(m.heads):
                head.W_query.weight.copy_(wq[i * hd:(i + 1) * hd])
                head.W_key.weight.copy_(wk[i * hd:(i + 1) * hd])
                head.W_value.weight.copy_(wv[i * hd:(i + 1) * hd])
            m.out_proj.weight.copy_(wo)
            m.out_proj.bias.copy_(bo)
            mods["wrapper"] = m

            m = CombinedQKV(d, d, t, h)
            m.qkv.weight.copy_(torch.cat([wq, wk, wv]))
            m.proj.weight.copy_(wo)
            m.proj.bias.copy_(bo)
            mods["combined_qkv"] = m

            m = Einsums(d, d, t, h)
            m.W_query.copy_(wq.view(h, hd, d))
            m.W_key.copy_(wk.view(h, hd, d))
            m.W_value.copy_(wv.view(h, hd, d))
            m.W_out.copy_(wo.view(d, h, hd))
            m.b_out.copy_(bo)
            mods["einsum"] = m

            m = TorchMHA(d, t, h)
            m.mha.in_proj_weight.copy_(torch.cat([wq, wk, wv]))
            m.mha.in_proj_bias.zero_()
            m.mha.out_proj.weight.copy_(wo)
            m.mha.out_proj.bias.copy_(bo)
            mods["torch_mha"] = m

            m = Fast(d, t, h)
            m.qkv.weight.copy_(torch.cat([wq / math.sqrt(hd), wk, wv]))
            m.proj.weight.copy_(wo)
            m.proj.bias.copy_(bo)
            mods["fast"] = m

            if hasattr(F, "scaled_dot_product_attention"):
                m = SDPA(d, h)
                m.qkv.weight.copy_(torch.cat([wq, wk, wv]))
                m.proj.weight.copy_(wo)
                m.proj.bias.copy_(bo)
                mods["sdpa"] = m
            else:
                self.notes.append("F.scaled_dot_product_attention is not in PyTorch %s (it came in 2.0): no PyTorch time in the fused row"
                                  % torch.__version__)

        wanted = req.get("impls")  # None: all; the chapter is always kept (the reference)
        self.mods = {k: v.to(self.device).eval() for k, v in mods.items() if wanted is None or k in wanted or k == "chapter"}
        self.x = x.to(self.device)
        self.check, self.seconds = {}, {}
        with torch.no_grad():
            outs = {}
            for name, mod in self.mods.items():  # also the first (warm-up) forward call of each
                self.sync()
                start = time.perf_counter()
                outs[name] = mod(self.x)
                self.sync()
                self.seconds[name] = time.perf_counter() - start
            out_ref = outs["chapter"]
            for name, out in outs.items():
                self.check[name] = ((out - out_ref).abs().max() / out_ref.abs().max()).item()
            del outs
        flat = out_ref.flatten().cpu()
        self.reference = {"abs_sum": flat.abs().double().sum().item(), "sum": flat.double().sum().item(),
                          "head": flat[:64].tolist(), "tail": flat[-64:].tolist()}

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def run(self, name, mode):
        mod = self.mods[name]
        self.sync()
        start = time.perf_counter()
        if mode == "forward":
            with torch.no_grad():
                out = mod(self.x)
                out.sum().item()
        elif mode == "backward":
            x = self.x.detach().requires_grad_(True)
            mod.zero_grad(set_to_none=True)
            loss = mod(x).sum()
            loss.backward()
            loss.item()
        else:
            raise ValueError("unknown mode %r" % mode)
        self.sync()
        return time.perf_counter() - start


def main():
    bench = None
    matmul = Matmul()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            cmd = req.get("cmd")
            if cmd == "setup":
                bench = Bench(req)
                reply = info(req)
                reply.update({"impls": list(bench.mods), "notes": bench.notes, "check": bench.check,
                              "seconds": bench.seconds, "reference": bench.reference})
            elif cmd == "info":
                reply = info(req)
            elif cmd == "matmul":
                reply = {"ok": True, "seconds": matmul.run(int(req["n"]))}
            elif cmd == "run":
                reply = {"ok": True, "seconds": bench.run(req["impl"], req["mode"])}
            elif cmd == "quit":
                break
            else:
                reply = {"ok": False, "error": "unknown command %r" % cmd}
        except Exception as e:  # reported to the Go side, which skips PyTorch with a note
            reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
