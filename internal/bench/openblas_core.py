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


# Set with OPENBLAS_CORETYPE by strongest_openblas_core's re-run, so that the re-run keeps it.
OURS = "ATTNBOOK_OPENBLAS_CORETYPE"
# The OPENBLAS_CORETYPE the environment carried and strongest_openblas_core dropped, for the notes.
IGNORED = "ATTNBOOK_OPENBLAS_CORETYPE_IGNORED"


def strongest_openblas_core():
    """Re-runs this process under the kernels OpenBLAS picks for the CPU, or, where OpenBLAS does
    not know the CPU, those its flags call for (core_for); nothing happens where libblas.so.3 is
    not OpenBLAS. An OPENBLAS_CORETYPE inherited from the environment is dropped (named in
    $ATTNBOOK_OPENBLAS_CORETYPE_IGNORED): a Zen 5 guest's environment set Haswell, and PyTorch
    1.13 took 1.3x the time of OpenBLAS's own Cooperlake kernels on 400 steps of nanoGPT's recipe
    there; a baseline forced onto weaker kernels would flatter every ratio against it."""
    env = os.environ
    coretype = env.get("OPENBLAS_CORETYPE", "")
    if coretype and coretype == env.get(OURS):
        return
    if coretype:
        env[IGNORED] = coretype
        del env["OPENBLAS_CORETYPE"]
        os.execv(sys.executable, sys.orig_argv)
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), []))
    except OSError:
        return
    want = core_for(openblas_core(), flags)
    if want:
        env["OPENBLAS_CORETYPE"] = env[OURS] = want
        os.execv(sys.executable, sys.orig_argv)


def coretype_note():
    """What the notes say of OPENBLAS_CORETYPE: the one set, and one the environment carried and
    strongest_openblas_core dropped; "" when neither."""
    notes = []
    if os.environ.get("OPENBLAS_CORETYPE"):
        notes.append("OPENBLAS_CORETYPE=" + os.environ["OPENBLAS_CORETYPE"])
    if os.environ.get(IGNORED):
        notes.append("the environment's OPENBLAS_CORETYPE=%s dropped" % os.environ[IGNORED])
    return ", ".join(notes)


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
