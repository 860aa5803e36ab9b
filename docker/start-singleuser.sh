#!/bin/bash
# start-singleuser.sh — JupyterHub single-user entry point (docker-stacks name): the Hub's
# spawner (e.g. DockerSpawner with image attnbook:...) sets JUPYTERHUB_* and runs this.
set -euo pipefail
command -v jupyterhub-singleuser >/dev/null || {
  echo "start-singleuser: this image was built with WITH_JUPYTERHUB=0" >&2; exit 1; }
exec jupyterhub-singleuser --ip=0.0.0.0 --port="${JUPYTER_PORT:-8888}" --ServerApp.root_dir="$HOME" \
  --ServerApp.default_url=/lab "$@"
