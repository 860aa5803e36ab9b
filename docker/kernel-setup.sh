#!/bin/sh
# kernel-setup.sh — install the attnbook Jupyter kernel (GoNB) for the image's user with the
# repository's own `go run ./kernel setup` (it picks gopls/goimports pins that build with the
# image's Go), then check that the installed spec points at files that exist in the image and that
# warm cells compile and link with the huge-page tools setup builds (ATTNBOOK_THP_TOOLS): without
# them a class's warm cells take the stock tools' time. Run from the repository root.
set -eu
cd "${ATTNBOOK_ROOT:-$(dirname "$0")/..}"
go run ./kernel setup

# Check: the spec exists, its program and every absolute path it names exist in this image.
python3 - <<'PY'
import json, os, subprocess, sys
specs = json.loads(subprocess.check_output(["jupyter", "kernelspec", "list", "--json"]))["kernelspecs"]
if "attnbook" not in specs:
    sys.exit("kernel-setup: no 'attnbook' kernel spec after setup; found: %s" % sorted(specs))
spec = specs["attnbook"]["spec"]
paths = [a.split("=", 1)[-1] for a in spec["argv"]]
paths += [p for v in spec.get("env", {}).values() for p in v.split(":") if not p.startswith("$")]
for p in paths:
    if p.startswith("/") and not os.path.exists(p):
        sys.exit("kernel-setup: the attnbook spec names %s, which does not exist in the image" % p)
if not spec.get("env", {}).get("ATTNBOOK_THP_TOOLS"):
    sys.exit("kernel-setup: the attnbook spec has no ATTNBOOK_THP_TOOLS: setup did not build the huge-page "
             "compile and link (its 'thp tools' line above says why), so warm cells would use the stock tools")
prog = spec["argv"][0]
if not (os.path.isabs(prog) and os.access(prog, os.X_OK)):
    sys.exit("kernel-setup: the attnbook spec's program %r is not an executable absolute path" % prog)
print("kernel-setup: ok attnbook (%s) -> %s" % (spec.get("display_name"), " ".join(spec["argv"])))
PY
