# openblas_core.py — run before torch is imported, by internal/bench's PyTorch side (torch.go puts
# it ahead of torch_bench.py) and by pkg/gpt/testdata/reference.py.
import os
import sys


def openblas_core():
    """The core OpenBLAS runs here (e.g. "SkylakeX", "Haswell"), or "" where libblas.so.3 is not
    OpenBLAS."""
    import ctypes
    try:
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode().strip()
    except (OSError, AttributeError):
        return ""


def strongest_openblas_core():
    """Re-runs this process under the OpenBLAS kernels the CPU calls for where OpenBLAS does not know
    the CPU (core_for). An OPENBLAS_CORETYPE already set is kept; nothing happens where
    libblas.so.3 is not OpenBLAS."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []))
    except OSError:
        return
    want = core_for(openblas_core(), flags)
    if want:
        os.environ["OPENBLAS_CORETYPE"] = want
        os.execv(sys.executable, sys.orig_argv)


def core_for(core, flags):
    """The OPENBLAS_CORETYPE to run under, given the core OpenBLAS picked and the CPU's flags
    (/proc/cpuinfo), or "" to keep it. OpenBLAS 0.3.21 (Debian bookworm's, under PyTorch 1.13) runs
    its generic Prescott (SSE3) kernels on Intel models newer than it: on a family 6 model 207
    (Emerald Rapids), PyTorch 1.13 took 212.6 s on nanoGPT's recipe there and 93.5 s on the SkylakeX
    kernels. A baseline on the generic kernels would flatter every ratio against it."""
    if core.lower() != "prescott":
        return ""
    if {"avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return ""
