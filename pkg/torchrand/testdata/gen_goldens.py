#!/usr/bin/python3
"""Regenerates goldens.json, the PyTorch reference values for package torchrand.

Run with Debian's PyTorch (x86-64, AVX2 kernels, built without MKL), from the repository root:

    /usr/bin/python3 pkg/torchrand/testdata/gen_goldens.py

Every case reseeds torch's default CPU generator with torch.manual_seed(seed), then runs its ops
in order. Each op yields a list of tensors (Linear with bias yields weight then bias). A tensor is
stored by its dtype, shape and raw bit patterns as one hex string (8 hex digits per float32,
16 per float64, big-endian per value, row-major); tensors with more than HASH_OVER elements are
stored as the SHA-256 of their little-endian bytes plus the first and last 16 values.

Ops (the Go test replays the same list):
  rand dims              torch.rand(*dims)
  rand64 dims            torch.rand(*dims, dtype=torch.float64)
  randn dims             torch.randn(*dims)
  uniform n from to      torch.empty(n).uniform_(from, to)
  normal n mean std      torch.empty(n).normal_(mean, std)
  linear in out bias     nn.Linear(in, out, bias) -> weight [out, in] (then bias [out])
  dropout p dims         nn.Dropout(p) in training mode applied to torch.ones(*dims)
  dropout_x p dims       the same applied to x, x[i] = float32((i % 23 - 11) * 0.375) (flat index)
An op may carry "repeat": k, run k times; the outputs are concatenated along a new leading axis.
"""
import hashlib
import json
import os
import struct
import sys

import torch

HASH_OVER = 8192


def record(t):
    t = t.detach().contiguous()
    if t.dtype == torch.float32:
        fmt, width = "I", 8
        ints = t.view(torch.int32).flatten().tolist()
        ints = [i & 0xFFFFFFFF for i in ints]
    elif t.dtype == torch.float64:
        fmt, width = "Q", 16
        ints = t.view(torch.int64).flatten().tolist()
        ints = [i & 0xFFFFFFFFFFFFFFFF for i in ints]
    else:
        raise ValueError(t.dtype)
    rec = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}
    hexes = ["%0*x" % (width, i) for i in ints]
    if len(ints) > HASH_OVER:
        rec["sha256"] = hashlib.sha256(struct.pack("<%d%s" % (len(ints), fmt), *ints)).hexdigest()
        rec["head"] = "".join(hexes[:16])
        rec["tail"] = "".join(hexes[-16:])
    else:
        rec["bits"] = "".join(hexes)
    return rec


def dropout_x(dims):
    n = 1
    for d in dims:
        n *= d
    vals = [((i % 23) - 11) * 0.375 for i in range(n)]
    return torch.tensor(vals, dtype=torch.float32).reshape(dims)


def run_op(op):
    kind = op["op"]
    if kind == "rand":
        return [torch.rand(tuple(op["dims"]))]
    if kind == "rand64":
        return [torch.rand(tuple(op["dims"]), dtype=torch.float64)]
    if kind == "randn":
        return [torch.randn(tuple(op["dims"]))]
    if kind == "uniform":
        return [torch.empty(op["n"]).uniform_(op["from"], op["to"])]
    if kind == "normal":
        return [torch.empty(op["n"]).normal_(op["mean"], op["std"])]
    if kind == "linear":
        layer = torch.nn.Linear(op["in"], op["out"], bias=op["bias"])
        return [layer.weight] + ([layer.bias] if op["bias"] else [])
    if kind in ("dropout", "dropout_x"):
        layer = torch.nn.Dropout(op["p"])
        layer.train()
        x = torch.ones(tuple(op["dims"])) if kind == "dropout" else dropout_x(op["dims"])
        return [layer(x)]
    raise ValueError(kind)


def run_case(case):
    torch.manual_seed(case["seed"])
    outs = []
    for op in case["ops"]:
        k = op.get("repeat", 1)
        results = [run_op(op) for _ in range(k)]
        if k == 1:
            outs.append([record(t) for t in results[0]])
        else:
            outs.append([record(torch.stack([r[j] for r in results])) for j in range(len(results[0]))])
    case["out"] = outs
    return case


def op(kind, **kw):
    d = {"op": kind}
    d.update(kw)
    return d


def cases():
    cs = []

    def add(name, seed, ops):
        cs.append({"name": name, "seed": seed, "ops": ops})

    seeds = [0, 123, 789, 2**32 + 7, 12345678901, -1, -5]
    # rand at several sizes, each from a fresh seed, and rand64.
    for s in seeds:
        add("rand_seed_%d" % s, s, [op("rand", dims=[3, 2]), op("rand", dims=[7]), op("rand", dims=[625]),
                                    op("rand", dims=[2, 3, 4]), op("rand", dims=[0]), op("rand", dims=[]),
                                    op("rand64", dims=[5])])
        add("randn_seed_%d" % s, s, [op("randn", dims=[6, 6]), op("randn", dims=[3]), op("randn", dims=[17]),
                                     op("randn", dims=[1]), op("randn", dims=[])])
    add("rand_5000", 123, [op("rand", dims=[5000])])
    add("rand_1500x10", 5, [op("rand", dims=[1500, 10])])  # 15000 values: hashed
    add("rand64_700", 789, [op("rand64", dims=[700])])
    # randn of every size 1..80 (both paths, every tail length), each from a fresh seed.
    for s in [0, 123, 789]:
        for n in range(1, 81):
            add("randn_%d_seed_%d" % (n, s), s, [op("randn", dims=[n])])
    # ... and the same sizes in one stream: cache interplay between the two paths.
    add("randn_1_to_80_stream", 42, [op("randn", dims=[n]) for n in range(1, 81)])
    add("randn_large", 2024, [op("randn", dims=[100000])])
    add("randn_large_tail", 99, [op("randn", dims=[12345])])
    add("randn_1M_tail", 1, [op("randn", dims=[1000003]), op("normal", n=1000000, mean=0.25, std=0.75)])
    add("randn_4096", 3, [op("randn", dims=[64, 64])])
    # Many small-path (float64 Box-Muller) values, hashed: Go's math vs glibc after rounding.
    add("randn_small_many", 31337, [op("randn", dims=[15], repeat=4000), op("randn", dims=[1], repeat=3001)])
    add("normal_small_many", 4242, [op("normal", n=7, mean=-0.75, std=0.3, repeat=3000)])
    # uniform_ with ranges.
    add("uniform_ranges", 123, [op("uniform", n=1000, **{"from": a, "to": b}) for a, b in
                                [(-0.37, 0.37), (2.0, 5.0), (-3.5, -1.25), (0.0, 1.0), (-1e-3, 1e-3),
                                 (100.0, 1000.5), (-0.5773502691896258, 0.5773502691896258), (1.5, 1.5)]])
    # normal_ with mean/std, both paths.
    add("normal_small", 11, [op("normal", n=15, mean=0.5, std=2.0, repeat=200),
                             op("normal", n=3, mean=-1.25, std=0.3, repeat=50)])
    add("normal_large", 12, [op("normal", n=37, mean=-1.25, std=0.3, repeat=20),
                             op("normal", n=1000, mean=3.0, std=0.02), op("normal", n=16, mean=0.0, std=0.0)])
    # Linear with and without bias.
    for s in [0, 123, 789, -5]:
        add("linear_seed_%d" % s, s, [op("linear", **{"in": i, "out": o, "bias": b}) for i, o, b in
                                      [(3, 2, False), (3, 2, True), (5, 3, True), (6, 6, False), (6, 6, True),
                                       (1, 4, True), (7, 1, True), (10, 10, True)]])
    add("linear_768_64", 123, [op("linear", **{"in": 768, "out": 64, "bias": True})])
    add("linear_every_in", 77, [op("linear", **{"in": i, "out": 2, "bias": True}) for i in range(1, 65)])
    # Dropout.
    for p in [0.1, 0.5, 0.9, 0.0, 1.0]:
        add("dropout_p_%g" % p, 123, [op("dropout", p=p, dims=[6, 6]), op("rand", dims=[3]),
                                      op("dropout_x", p=p, dims=[5, 7]), op("rand", dims=[3])])
    add("dropout_odd_p", 321, [op("dropout", p=p, dims=[200]) for p in [1 / 3, 0.2, 0.7, 0.95, 1e-9]])
    add("dropout_large", 8, [op("dropout", p=0.25, dims=[128, 100])])
    # Mixed sequences.
    add("mixed_123", 123, [op("rand", dims=[3]), op("randn", dims=[5]), op("linear", **{"in": 4, "out": 3, "bias": True}),
                           op("dropout", p=0.5, dims=[4, 4]), op("randn", dims=[3]), op("randn", dims=[20]),
                           op("randn", dims=[1])])
    for s in [0, 123]:
        add("randn_rand_randn_%d" % s, s, [op("randn", dims=[1]), op("rand", dims=[1]), op("randn", dims=[1])])
    add("randn_3_3_vs_6", 0, [op("randn", dims=[3]), op("randn", dims=[3])])
    add("randn_cache_across_large", 5, [op("randn", dims=[1]), op("randn", dims=[16]), op("randn", dims=[1]),
                                        op("linear", **{"in": 2, "out": 2, "bias": True}), op("randn", dims=[2]),
                                        op("dropout", p=0.3, dims=[3]), op("randn", dims=[1])])
    # The seed documents.
    add("doc_seed123_rand_3x2", 123, [op("rand", dims=[3, 2])])
    add("doc_seed123_dropout", 123, [op("dropout", p=0.5, dims=[6, 6])])
    add("doc_seed0_randn_6x6", 0, [op("randn", dims=[6, 6])])
    add("doc_seed789_qkv", 789, [op("linear", **{"in": 3, "out": 2, "bias": False})] * 3)
    add("doc_seed7_randn16", 7, [op("randn", dims=[16])])
    add("doc_seed123_linear_5_3", 123, [op("linear", **{"in": 5, "out": 3, "bias": True})])
    add("doc_seed123_mha", 123, [op("linear", **{"in": 6, "out": 6, "bias": False})] * 3 +
        [op("linear", **{"in": 6, "out": 6, "bias": True}), op("dropout", p=0.1, dims=[1, 2, 3, 3])])
    add("doc_seed123_heads", 123, [op("linear", **{"in": 3, "out": 2, "bias": False})] * 6 +
        [op("dropout", p=0.5, dims=[2, 6, 6])])
    return cs


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens.json")
    doc = {
        "generator": "pkg/torchrand/testdata/gen_goldens.py",
        "torch": torch.__version__,
        "cases": [run_case(c) for c in cases()],
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote %s (%d cases, %d bytes)" % (out, len(doc["cases"]), os.path.getsize(out)), file=sys.stderr)


if __name__ == "__main__":
    main()
