#!/usr/bin/env python3
"""run-notebooks.py — execute notebooks headless through an installed Jupyter kernel (default
"attnbook"), the way JupyterLab would: kernel started in the notebook's directory, cells in order,
stop at the first error. Used inside the classroom image (build-time warm-up, smoke test).

  python3 run-notebooks.py [--kernel attnbook] [--timeout SECONDS] NOTEBOOK.ipynb...

Prints one line per notebook; the first line printed is `first-cell-epoch=<unix seconds>` when
the first code cell finishes. Exits non-zero naming the notebook and cell that failed.
"""
import argparse, os, sys, time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", default="attnbook")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per cell")
    ap.add_argument("notebooks", nargs="+")
    args = ap.parse_args()

    first = [None]

    def on_cell_executed(cell, cell_index, execute_reply):
        if first[0] is None and cell.cell_type == "code":
            first[0] = time.time()
            print("first-cell-epoch=%.3f" % first[0], flush=True)

    ok = 0
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        ncode = sum(1 for c in nb.cells if c.cell_type == "code")
        client = NotebookClient(
            nb, kernel_name=args.kernel, timeout=args.timeout, startup_timeout=120,
            resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
            on_cell_executed=on_cell_executed)
        t0 = time.time()
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError) as e:
            print("run-notebooks: FAIL %s: %s" % (path, str(e)[-3000:]), file=sys.stderr, flush=True)
            continue
        except Exception as e:  # kernel died, cannot start, ...
            print("run-notebooks: FAIL %s: %s: %s" % (path, type(e).__name__, e), file=sys.stderr, flush=True)
            continue
        # GoNB reports compile errors as error outputs; a clean run has none.
        errs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                if o.get("output_type") == "error"]
        if errs:
            print("run-notebooks: FAIL %s: error output: %s %s" % (path, errs[0].get("ename"), errs[0].get("evalue")),
                  file=sys.stderr, flush=True)
            continue
        ok += 1
        print("run-notebooks: ok %s cells=%d time=%.1fs" % (path, ncode, time.time() - t0), flush=True)
    print("run-notebooks: %d/%d notebooks ok" % (ok, len(args.notebooks)), flush=True)
    sys.exit(0 if ok == len(args.notebooks) else 1)


if __name__ == "__main__":
    main()
