#!/usr/bin/env python3
"""A student's Jupyter server: jupyterhub-singleuser, without running Node.js at its start.

When JupyterLab's server extension is imported (jupyterlab/labapp.py, at module level:
get_app_version), it reads yarn's settings for the npm registry that only its extension builder
uses, by running `node yarn.js config` whenever node is on PATH. The attnbook image has no
Node.js, so there JupyterLab skips it; the hub image reinstalls Node.js for its proxy
(configurable-http-proxy), so every student's server start ran node (yarnpkg is absent: a
Node.js stack trace, "Fail to get yarn configuration", in the hub's log) and spent its start
(jupyter-lab started in the hub image: 0.78 CPU-s until it answers, 0.69 with this; README).
This does what JupyterLab does without node: no yarn settings, its default registry. Nothing
else changes (students cannot build Lab extensions here, with or without it).
"""
import sys

import jupyterlab.commands


def _no_yarn_config(logger):
    """jupyterlab.commands._yarn_config's answer when node is not found."""
    return {"yarn config": {}, "npm config": {}}


jupyterlab.commands._yarn_config = _no_yarn_config

from jupyterhub.singleuser import main  # noqa: E402 (after the patch, which labapp's import uses)

if __name__ == "__main__":
    sys.exit(main())
