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
data_dir, kernel_dirs = "", []
try:
    from jupyter_core.paths import jupyter_data_dir, jupyter_path
    data_dir = jupyter_data_dir()
    kernel_dirs = jupyter_path("kernels")
except Exception:
    pass
print(json.dumps({"python": sys.version.split()[0], "packages": packages, "data_dir": data_dir,
                  "kernel_dirs": kernel_dirs}))
