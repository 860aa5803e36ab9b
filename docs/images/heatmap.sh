#!/usr/bin/env bash
# Remakes docs/images/heatmap.png, the picture on the README's first screen: notebook 03's heatmap
# cell (CausalAttention, seed 123) and the markdown line above it, executed by the real kernel
# (go run ./kernel run), rendered as the classic Notebook shows it (nbconvert's HTML), then
# photographed by headless Chromium. Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
go run ./kernel run -o "$tmp" notebooks/03_causal_mask_dropout.ipynb
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
nb = json.load(open(f"{tmp}/03_causal_mask_dropout.ipynb"))
i = next(i for i, c in enumerate(nb["cells"]) if "CausalAttention (seed 123): batch 0" in "".join(c["source"]))
nb["cells"] = nb["cells"][i - 1:i + 1]  # the sentence above it, and the cell
json.dump(nb, open(f"{tmp}/cell.ipynb", "w"))
PY
jupyter nbconvert --to html "$tmp/cell.ipynb" --output "$tmp/cell.html" --HTMLExporter.mathjax_url=none
sed -i '/MathJax/d' "$tmp/cell.html" # no math here; nothing to fetch
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1120,600 \
  --screenshot="$PWD/docs/images/heatmap.png" "file://$tmp/cell.html" 2>/dev/null
echo "wrote docs/images/heatmap.png"
