#!/usr/bin/env bash
# run.sh — run a command in attnbook's current-PyTorch container (docker/torch/Dockerfile; built
# first when missing), offline (--network none), with the checkout mounted read-only at /attnbook
# (the working directory) and $ATTNBOOK_DATA, when set, read-only at /data.
#
#   docker/torch/run.sh python3 -c 'import torch; print(torch.__version__)'
#   ATTNBOOK_DATA=../shared/data docker/torch/run.sh \
#     python3 pkg/gpt/testdata/reference.py bench --data /data/tinyshakespeare.txt --attention sdpa --threads 2
#
# $TORCH_BLAS picks libblas.so.3 as the bench's columns do: openblas (the default) or reference.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -gt 0 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
tag=$(bash "$here/build.sh")
case "${TORCH_BLAS:-openblas}" in
  openblas) blas=/usr/lib/x86_64-linux-gnu/openblas-pthread ;;
  reference) blas=/usr/lib/x86_64-linux-gnu/blas ;;
  *) echo "run.sh: TORCH_BLAS=$TORCH_BLAS: want openblas or reference" >&2; exit 2 ;;
esac
mounts=(-v "$root:/attnbook:ro")
if [ -n "${ATTNBOOK_DATA:-}" ]; then mounts+=(-v "$(cd "$ATTNBOOK_DATA" && pwd):/data:ro"); fi
tty=()
[ -t 0 ] && [ -t 1 ] && tty=(-t)
# OMP_WAIT_POLICY=PASSIVE: PyTorch 2.6's OpenMP workers otherwise spin after every parallel region
# and take the cores OpenBLAS's threads need (nanoGPT's recipe 9× slower on 2 cores; docs/gpt.md).
exec docker run --rm -i "${tty[@]}" --network none "${mounts[@]}" -w /attnbook \
  -e LD_LIBRARY_PATH="$blas" -e OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}" "$tag" "$@"
