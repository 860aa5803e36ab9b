#!/usr/bin/python3
"""The PyTorch twin of package gpt: goldens for its tests, and the CPU baseline of its benchmark.

The model is nanoGPT's GPT (Karpathy, github.com/karpathy/nanoGPT, model.py) with one change: the
attention is the course's MultiHeadAttention (seeds 000/001/004: separate W_query, W_key, W_value
Linear layers, a causal -inf mask, softmax of scores / sqrt(head_dim), out_proj), which is what
package gpt builds from pkg/attention's graph functions. Initialisation, optimiser, learning-rate
schedule, gradient clipping and batches follow nanoGPT's train.py:

  * construction draws (nn.Embedding: normal_(0, 1); nn.Linear: kaiming_uniform_ + bias) in module
    order, lm_head.weight tied to wte.weight, then model.apply(_init_weights) (normal_(0, 0.02) on
    every Linear and Embedding weight, zero biases, post-order), then normal_(0, 0.02/sqrt(2·n_layer))
    on every parameter named *out_proj.weight or *c_proj.weight (named_parameters order);
  * AdamW(betas, eps=1e-8) with weight decay on parameters of 2 or more dimensions only;
  * learning rate: linear warmup lr·(it+1)/(warmup+1), cosine decay to min_lr at lr_decay_iters;
  * clip_grad_norm_(params, grad_clip) before each step;
  * batches: torch.randint(len(data) - block_size, (batch_size,), generator=gen) offsets, x = data[i:i+T],
    y = data[i+1:i+1+T], from a torch.Generator seeded with batch_seed (evaluation batches from another);
    or, as nanoGPT's train.py draws them, from the global generator that initialized the model, the
    next training batch drawn before each estimate (nanogpt_draws(), bench --stream nanogpt).

Usage, from the repository root, with Debian's python3-torch 1.13:

    /usr/bin/python3 pkg/gpt/testdata/reference.py goldens      # writes pkg/gpt/testdata/goldens.json
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \
      /usr/bin/python3 pkg/gpt/testdata/reference.py bench --data ../shared/data/tinyshakespeare.txt

(it re-runs itself under the kernels OpenBLAS picks for the CPU, dropping an OPENBLAS_CORETYPE the
environment set, or, where OpenBLAS does not know the CPU, as 0.3.21 does not know Intel models
newer than it, under those the CPU calls for: internal/bench/openblas_core.py; "openblas_core" and
"openblas_coretype" in its output name the kernels it ran on), and with PyTorch 2.6 (Debian
trixie's, in the container of docker/torch), its attention through F.scaled_dot_product_attention
as nanoGPT's model does on PyTorch >= 2.0:

    ATTNBOOK_DATA=../shared/data docker/torch/run.sh python3 pkg/gpt/testdata/reference.py bench \
      --data /data/tinyshakespeare.txt --attention sdpa --threads 2
"""
import json
import math
import os
import resource
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in internal/bench
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "internal", "bench"))
from openblas_core import coretype_note, openblas_core, strongest_openblas_core  # noqa: E402

strongest_openblas_core()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class LayerNorm(nn.Module):
    """nanoGPT's LayerNorm with an optional bias (eps 1e-5)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class MultiHeadAttention(nn.Module):
    """The course's causal MultiHeadAttention (seed 001/004), out_proj bias optional. With sdpa, the
    scores, mask, softmax and context are one F.scaled_dot_product_attention(is_causal=True) call,
    as nanoGPT's CausalSelfAttention does on PyTorch >= 2.0 (its "flash" path); same weights."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, bias, sdpa=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads, self.head_dim, self.sdpa = d_out, num_heads, d_out // num_heads, sdpa
        self.W_query = nn.Linear(d_in, d_out, bias=bias)
        self.W_key = nn.Linear(d_in, d_out, bias=bias)
        self.W_value = nn.Linear(d_in, d_out, bias=bias)
        self.out_proj = nn.Linear(d_out, d_out, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x):
        b, t, _ = x.shape
        keys = self.W_key(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # [B, H, T, hs]
        queries = self.W_query(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        if self.sdpa:
            context = F.scaled_dot_product_attention(queries, keys, values, attn_mask=None,
                                                     dropout_p=self.dropout.p if self.training else 0.0, is_causal=True)
            return self.out_proj(context.transpose(1, 2).contiguous().view(b, t, self.d_out))  # [B, T, C]
        scores = queries @ keys.transpose(2, 3)  # [B, H, T, T]
        scores.masked_fill_(self.mask.bool()[:t, :t], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        weights = self.dropout(weights)
        context = (weights @ values).transpose(1, 2).contiguous().view(b, t, self.d_out)  # [B, T, C]
        return self.out_proj(context)


class MLP(nn.Module):
    def __init__(self, n_embd, dropout, bias):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.attn = MultiHeadAttention(cfg["n_embd"], cfg["n_embd"], cfg["block_size"], cfg["dropout"],
                                       cfg["n_head"], cfg["bias"], cfg.get("attention") == "sdpa")
        self.resid_dropout = nn.Dropout(cfg["dropout"])
        self.ln_2 = LayerNorm(cfg["n_embd"], cfg["bias"])
        self.mlp = MLP(cfg["n_embd"], cfg["dropout"], cfg["bias"])

    def forward(self, x):
        x = x + self.resid_dropout(self.attn(self.ln_1(x)))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg["vocab_size"], cfg["n_embd"]),
            wpe=nn.Embedding(cfg["block_size"], cfg["n_embd"]),
            drop=nn.Dropout(cfg["dropout"]),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])]),
            ln_f=LayerNorm(cfg["n_embd"], cfg["bias"]),
        ))
        self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight") or pn.endswith("out_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg["n_layer"]))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.shape
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def get_lr(it, tc):
    if it < tc["warmup_iters"]:
        return tc["learning_rate"] * (it + 1) / (tc["warmup_iters"] + 1)
    if it > tc["lr_decay_iters"]:
        return tc["min_lr"]
    ratio = (it - tc["warmup_iters"]) / (tc["lr_decay_iters"] - tc["warmup_iters"])
    return tc["min_lr"] + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (tc["learning_rate"] - tc["min_lr"])


def get_batch(data, block_size, batch_size, gen):
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=gen)
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return ix, x, y


def make_optimizer(model, tc):
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    nodecay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": tc["weight_decay"]}, {"params": nodecay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=tc["learning_rate"], betas=(tc["beta1"], tc["beta2"]), eps=1e-8)


def train_step(model, opt, x, y, it, tc):
    lr = get_lr(it, tc)
    for group in opt.param_groups:
        group["lr"] = lr
    _, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if tc["grad_clip"] > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc["grad_clip"])
    opt.step()
    return loss.item()


def synthetic_data(n):
    """Token ids both sides compute the same way: data[i] = (3·i + i//5 + (i//11)%7) mod 65."""
    return torch.tensor([(3 * i + i // 5 + (i // 11) % 7) % 65 for i in range(n)], dtype=torch.long)


def param_summary(model):
    out = {}
    for name, p in model.state_dict().items():
        if name.endswith(".mask") or name == "lm_head.weight":
            continue
        flat = p.detach().flatten()
        out[name] = {"shape": list(p.shape), "head": [float(v) for v in flat[:6]],
                     "sum": float(flat.double().sum()), "abs_sum": float(flat.double().abs().sum())}
    return out


def train_loop(model, opt, train, val, tc, eval_interval, eval_iters, gen):
    """nanoGPT train.py's loop: the first training batch, then for each step an estimate every
    eval_interval steps (none if 0), the step, and the next training batch, so that each batch is
    drawn before the estimate that precedes its step; a closing estimate after the last step.
    Batches come from gen (None: the global generator). An estimate is the mean loss of eval_iters
    training and then eval_iters validation batches. Returns the step losses, the estimates and
    the loop's seconds (its estimates included, the closing one not)."""
    T, B = model.cfg["block_size"], tc["batch_size"]
    losses, estimates = [], []

    def estimate(it):
        model.eval()
        est = {"step": it}
        with torch.no_grad():
            for name, split in (("train", train), ("val", val)):
                est[name] = sum(model(*get_batch(split, T, B, gen)[1:])[1].item()
                                for _ in range(eval_iters)) / eval_iters
        model.train()
        estimates.append(est)

    t0 = time.time()
    _, x, y = get_batch(train, T, B, gen)
    for it in range(tc["steps"]):
        if eval_interval > 0 and it % eval_interval == 0:
            estimate(it)
        losses.append(train_step(model, opt, x, y, it, tc))
        _, x, y = get_batch(train, T, B, gen)
    seconds = time.time() - t0
    if eval_interval > 0:
        estimate(tc["steps"])
    return losses, estimates, seconds


def nanogpt_draws():
    """train_loop on the synthetic data (90/10 split) with every batch from the global generator
    after the model's init, as nanoGPT's train.py draws them."""
    cfg = dict(vocab_size=65, block_size=32, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=False)
    tc = dict(seed=1337, batch_size=8, learning_rate=3e-3, min_lr=3e-4, warmup_iters=3, lr_decay_iters=10,
              weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0, steps=10, eval_interval=3, eval_iters=2)
    data = synthetic_data(4000)
    n = int(0.9 * len(data))
    torch.manual_seed(tc["seed"])
    model = GPT(cfg)
    opt = make_optimizer(model, tc)
    losses, estimates, _ = train_loop(model, opt, data[:n], data[n:], tc, tc["eval_interval"], tc["eval_iters"], None)
    return {"config": cfg, "train": tc, "losses": losses, "estimates": estimates}


def goldens():
    cases = []
    for name, cfg, tc in [
        ("nobias", dict(vocab_size=65, block_size=32, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=False),
         dict(seed=1337, batch_seed=7, batch_size=8, learning_rate=3e-3, min_lr=3e-4, warmup_iters=3,
              lr_decay_iters=10, weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0, steps=10)),
        ("bias", dict(vocab_size=65, block_size=16, n_layer=3, n_head=2, n_embd=32, dropout=0.0, bias=True),
         dict(seed=42, batch_seed=3, batch_size=4, learning_rate=1e-2, min_lr=1e-3, warmup_iters=2,
              lr_decay_iters=8, weight_decay=0.1, beta1=0.9, beta2=0.95, grad_clip=0.5, steps=10)),
    ]:
        torch.manual_seed(tc["seed"])
        model = GPT(cfg)
        summary = param_summary(model)
        data = synthetic_data(4000)
        gen = torch.Generator().manual_seed(tc["batch_seed"])
        opt = make_optimizer(model, tc)
        losses, offsets = [], []
        first_loss = None
        for it in range(tc["steps"]):
            ix, x, y = get_batch(data, cfg["block_size"], tc["batch_size"], gen)
            offsets.append(ix.tolist())
            if it == 0:
                with torch.no_grad():
                    logits, loss = model(x, y)
                first_loss = loss.item()
                first_logits = logits[0, :3, :5].flatten().tolist()
            losses.append(train_step(model, opt, x, y, it, tc))
        cases.append({"name": name, "config": cfg, "train": tc, "params": summary,
                      "first_loss": first_loss, "first_logits": first_logits,
                      "offsets": offsets, "losses": losses,
                      "final_params": param_summary(model)})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases, "nanogpt_draws": nanogpt_draws()}, f, indent=1)
        f.write("\n")
    print("wrote", path)


def full_loss(model, data, block_size, batch=64):
    """Mean next-token loss over all of data, cut into consecutive windows of block_size (the last,
    partial one dropped): every position of the split predicted once."""
    n = (len(data) - 1) // block_size
    xs = data[:n * block_size].view(n, block_size)
    ys = data[1:n * block_size + 1].view(n, block_size)
    total = 0.0
    with torch.no_grad():
        for i in range(0, n, batch):
            total += model(xs[i:i + batch], ys[i:i + batch])[1].item() * len(xs[i:i + batch])
    return total / n


def bench(argv):
    """nanoGPT's CPU recipe on Tiny Shakespeare with this model: prints one JSON line of results.

    --stream nanogpt draws every batch from the generator that initialized the model, in nanoGPT
    train.py's order (first batch, then at every eval_interval step eval_iters training and
    eval_iters validation batches, the next training batch drawn before each estimate); --stream
    seeded (the default before) draws training batches from a generator seeded with batch_seed."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--eval_iters", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--stream", choices=["nanogpt", "seeded"], default="nanogpt")
    ap.add_argument("--eval_interval", type=int, default=250)
    ap.add_argument("--nanogpt_eval_iters", type=int, default=20)
    ap.add_argument("--attention", choices=["chapter", "sdpa"], default="chapter",
                    help="sdpa: F.scaled_dot_product_attention(is_causal=True), nanoGPT's path on PyTorch >= 2.0")
    a = ap.parse_args(argv)
    if a.attention == "sdpa" and not hasattr(F, "scaled_dot_product_attention"):
        sys.exit("reference.py bench: --attention sdpa needs PyTorch >= 2.0; this is %s" % torch.__version__)
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    cfg = dict(vocab_size=65, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0, bias=False,
               attention=a.attention)
    tc = dict(seed=1337, batch_seed=1338, batch_size=12, learning_rate=a.lr, min_lr=a.lr / 10, warmup_iters=a.warmup,
              lr_decay_iters=a.steps, weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0, steps=a.steps)
    text = open(a.data).read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    train, val = data[:n], data[n:]
    T, B = cfg["block_size"], tc["batch_size"]
    torch.manual_seed(tc["seed"])
    model = GPT(cfg)
    opt = make_optimizer(model, tc)
    gen = None if a.stream == "nanogpt" else torch.Generator().manual_seed(tc["batch_seed"])
    interval = a.eval_interval if a.stream == "nanogpt" else 0
    losses, evals, train_s = train_loop(model, opt, train, val, tc, interval, a.nanogpt_eval_iters, gen)
    model.eval()
    egen = torch.Generator().manual_seed(tc["batch_seed"] + 1000)
    with torch.no_grad():
        val_loss = sum(model(*get_batch(val, T, B, egen)[1:])[1].item()
                       for _ in range(a.eval_iters)) / a.eval_iters
    tokens = a.steps * B * T
    print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "attention": a.attention, "threads": torch.get_num_threads(),
                      "openblas_core": openblas_core(), "openblas_coretype": coretype_note(), "stream": a.stream, "steps": a.steps, "train_seconds": round(train_s, 2),
                      "tokens_per_second": round(tokens / train_s), "final_train_loss": losses[-1],
                      "val_loss": val_loss, "val_loss_full": full_loss(model, val, T), "nanogpt_estimates": evals,
                      "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "bench":
        bench(sys.argv[2:])
    else:
        goldens()
