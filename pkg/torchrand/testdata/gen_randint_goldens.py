#!/usr/bin/python3
"""Regenerates randint_goldens.json, PyTorch's torch.randint for package torchrand's Randint.

Run with Debian's PyTorch 1.13 (x86-64), from the repository root:

    /usr/bin/python3 pkg/torchrand/testdata/gen_randint_goldens.py

Every case reseeds with torch.manual_seed(seed) and runs its ops in order; each op yields one
tensor, stored as a list of integers (randint gives int64; rand gives float32, stored as its
uint32 bit patterns so the Go test can check the stream position after randint).

Ops:
  randint low high dims   torch.randint(low, high, dims)           (int64 values)
  rand dims               torch.rand(dims)                          (float32 bits)
"""
import json
import os
import struct

import torch

CASES = [
    {"name": "small", "seed": 123, "ops": [{"op": "randint", "low": 0, "high": 10, "dims": [20]}]},
    {"name": "2d", "seed": 0, "ops": [{"op": "randint", "low": 0, "high": 65, "dims": [4, 8]}]},
    {"name": "negative_low", "seed": 7, "ops": [{"op": "randint", "low": -5, "high": 5, "dims": [3, 3]}]},
    {"name": "range1", "seed": 7, "ops": [{"op": "randint", "low": 3, "high": 4, "dims": [5]},
                                         {"op": "rand", "dims": [2]}]},
    # nanoGPT's get_batch on Tiny Shakespeare's 90% training split: randint(len(data) - block_size, (batch_size,))
    {"name": "nanogpt_batches", "seed": 1337, "ops": [
        {"op": "randint", "low": 0, "high": 1003854 - 64, "dims": [12]},
        {"op": "randint", "low": 0, "high": 1003854 - 64, "dims": [12]},
        {"op": "randint", "low": 0, "high": 111540 - 64, "dims": [12]}]},
    # range >= 2^32 uses random64(): two engine outputs per value
    {"name": "wide_range", "seed": 42, "ops": [{"op": "randint", "low": 0, "high": 1 << 40, "dims": [6]},
                                              {"op": "randint", "low": -(1 << 33), "high": 1 << 33, "dims": [4]},
                                              {"op": "rand", "dims": [2]}]},
    {"name": "range_2_32_minus_1", "seed": 5, "ops": [{"op": "randint", "low": 0, "high": (1 << 32) - 1, "dims": [4]}]},
    {"name": "range_2_32", "seed": 5, "ops": [{"op": "randint", "low": 0, "high": 1 << 32, "dims": [4]}]},
    {"name": "large_crosses_twist", "seed": 99, "ops": [{"op": "randint", "low": 0, "high": 1000, "dims": [700]},
                                                       {"op": "rand", "dims": [3]}]},
    {"name": "empty", "seed": 3, "ops": [{"op": "randint", "low": 0, "high": 5, "dims": [0, 4]},
                                        {"op": "rand", "dims": [1]}]},
    {"name": "scalar_after_rand", "seed": 11, "ops": [{"op": "rand", "dims": [5]},
                                                     {"op": "randint", "low": 100, "high": 200, "dims": []}]},
]


def run(op):
    if op["op"] == "randint":
        t = torch.randint(op["low"], op["high"], tuple(op["dims"]))
        assert t.dtype == torch.int64
        return {"shape": list(t.shape), "values": t.flatten().tolist()}
    if op["op"] == "rand":
        t = torch.rand(tuple(op["dims"]))
        bits = [struct.unpack("<I", struct.pack("<f", v))[0] for v in t.flatten().tolist()]
        return {"shape": list(t.shape), "values": bits}
    raise ValueError(op)


def main():
    out = {"torch": torch.__version__, "cases": []}
    for case in CASES:
        torch.manual_seed(case["seed"])
        out["cases"].append(dict(case, out=[run(op) for op in case["ops"]]))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "randint_goldens.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
