#!/bin/bash
# start-notebook.sh — the image's default command (docker-stacks style): JupyterLab on
# 0.0.0.0:${JUPYTER_PORT:-8888}, root at /home/jovyan, token authentication on (a random token is
# printed in the logs unless JUPYTER_TOKEN is given). Extra arguments go to `jupyter lab`.
# Under JupyterHub (JUPYTERHUB_API_TOKEN set) it starts the single-user server instead.
set -euo pipefail

# A bind mount over ~/work hides the corpus put there at build time: copy it back, or point
# $ATTNBOOK_DATA (inherited by every kernel) at the image's pristine copy.
if [ -n "${ATTNBOOK_DATA:-}" ] && [ ! -f "$ATTNBOOK_DATA/tinyshakespeare.txt" ] && [ -f /opt/attnbook/data/tinyshakespeare.txt ]; then
  if ! { mkdir -p "$ATTNBOOK_DATA" && cp /opt/attnbook/data/tinyshakespeare.txt "$ATTNBOOK_DATA/"; } 2>/dev/null; then
    echo "start-notebook: $ATTNBOOK_DATA is not writable; ATTNBOOK_DATA=/opt/attnbook/data" >&2
    export ATTNBOOK_DATA=/opt/attnbook/data
  fi
fi

# Sign the notebooks (jupyter trust) so the classic Notebook shows their HTML/SVG output: setup
# signed the image's copies; this covers a checkout or volume mounted over them (kernel up -lab).
if [ -n "${ATTNBOOK_ROOT:-}" ] && ls "$ATTNBOOK_ROOT"/notebooks/*.ipynb >/dev/null 2>&1; then
  python3 -m nbformat.sign "$ATTNBOOK_ROOT"/notebooks/*.ipynb >/dev/null 2>&1 \
    || echo "start-notebook: could not sign the notebooks (jupyter trust); the classic Notebook will say Not Trusted" >&2
fi

if [ -n "${JUPYTERHUB_API_TOKEN:-}" ]; then
  exec /usr/local/bin/start-singleuser.sh "$@"
fi
exec jupyter lab --no-browser --ServerApp.ip=0.0.0.0 --ServerApp.port="${JUPYTER_PORT:-8888}" \
  --ServerApp.root_dir="$HOME" --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate "$@"
