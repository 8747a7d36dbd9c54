"""Runs every benchmark, one after another, each rewriting its own section of RESULTS.md.

``python -m benchmarks.run`` runs them all; ``python -m benchmarks.run operator local`` runs the
named ones. Each benchmark is started as its own process (``python -m benchmarks.<name>_bench``)
so one benchmark's threads, servers and Ray processes cannot disturb the next one's figures.
Extra arguments after ``--`` go to every benchmark (``-- --no-write`` prints without writing).
``kueue_baseline`` (Kueue's scheduler baseline end to end, three full runs) is the long one; for a
quick look run ``python -m benchmarks.kueue_baseline_bench --scale 0.1 --runs 1`` on its own.
The GPU check is not run here: it needs a GPU host (``python benchmarks/gpu_check.py``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = (
    "apiserver", "conversion", "cel", "scheduling", "operator", "local", "sdk", "dashboard", "kueue_baseline",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[: len(argv) - len(extra) - (1 if "--" in argv else 0)])
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    failed: list[str] = []
    for name in args.names or BENCHMARKS:
        started = time.monotonic()
        print(f"== {name}", flush=True)
        code = subprocess.call([sys.executable, "-m", f"benchmarks.{name}_bench", *extra], cwd=ROOT)
        print(f"== {name}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
