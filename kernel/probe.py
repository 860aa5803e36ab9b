# Reports, as JSON, which Jupyter packages this Python has (for `go run ./kernel`).
import json, sys
from importlib import metadata

packages = {}
for dist in ("jupyterlab", "notebook", "jupyter_server", "jupyter_client", "jupyter_core",
             "nbclient", "nbformat", "nbconvert", "ipykernel"):
    try:
        packages[dist] = metadata.version(dist)
    except Exception:
        pass
data_dir, config_dir, kernel_dirs = "", "", []
try:
    from jupyter_core.paths import jupyter_config_dir, jupyter_data_dir, jupyter_path
    data_dir = jupyter_data_dir()
    config_dir = jupyter_config_dir()
    kernel_dirs = jupyter_path("kernels")
except Exception:
    pass
# The classic Notebook's own static files (found, not imported: importing it takes long).
notebook_static = ""
try:
    import importlib.util, os
    spec = importlib.util.find_spec("notebook")
    if spec and spec.submodule_search_locations:
        notebook_static = os.path.join(list(spec.submodule_search_locations)[0], "static")
except Exception:
    pass
print(json.dumps({"python": sys.version.split()[0], "packages": packages, "data_dir": data_dir,
                  "config_dir": config_dir, "notebook_static": notebook_static,
                  "kernel_dirs": kernel_dirs}))
