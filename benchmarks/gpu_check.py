"""GPU check for local mode: the Node the agent would register reports this host's real GPUs.

Meant for a machine with NVIDIA GPUs where Ray is absent: it loads only the agent's
node-detection module (``codeflare/local/agent/node_info.py``, standard library only) by path, and
compares what it reports with two independent witnesses, ``nvidia-smi -L`` and, when importable,
``torch.cuda``. Writes the "gpu" section of benchmarks/RESULTS.md (stamped with the machine it
ran on) and, when ``$OUT`` is set, a copy of RESULTS.md there; ``--record FILE`` splices the gpu
section of such a copy into this checkout's RESULTS.md. Exit status 1 when the counts disagree.

    python benchmarks/gpu_check.py                   # on the GPU machine
    python benchmarks/gpu_check.py --record RESULTS.md   # back here, with the copy it wrote
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import RESULTS, markers, write_block, write_section  # noqa: E402

SECTION = "gpu"


def load_node_info() -> ModuleType:
    """The agent's node-detection module, without importing the package (or Ray)."""
    path = ROOT / "src" / "codeflare" / "local" / "agent" / "node_info.py"
    spec = importlib.util.spec_from_file_location("codeflare_node_info", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def smi_names() -> list[str] | None:
    """GPU names from ``nvidia-smi -L`` (None when it is missing or fails)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    result = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
    if result.returncode != 0:
        return None
    names = []
    for line in result.stdout.splitlines():
        if line.startswith("GPU "):
            names.append(line.split(":", 1)[1].split("(UUID")[0].strip())
    return names


def torch_names() -> list[str] | None:
    """GPU names from ``torch.cuda`` (None when torch or CUDA is not available)."""
    try:
        import torch  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return []
    return [str(torch.cuda.get_device_name(i)) for i in range(torch.cuda.device_count())]


def check() -> tuple[str, bool]:
    """The markdown section body and whether the Node's GPU count matches every witness."""
    node_info = load_node_info()
    capacity = node_info.detect_node_capacity()
    allocatable, labels = capacity.allocatable, capacity.labels
    reported = int(allocatable.get(node_info.GPU_RESOURCE, "0"))
    witnesses = {"nvidia-smi -L": smi_names(), "torch.cuda": torch_names()}
    seen = {k: v for k, v in witnesses.items() if v is not None}
    agrees = bool(seen) and all(len(v) == reported for v in seen.values())
    rows = "\n".join(
        f"| {name} | {len(v)} | {', '.join(sorted(set(v))) or '-'} |" for name, v in seen.items()
    )
    product = labels.get(node_info.GPU_PRODUCT_LABEL, "-")
    verdict = "matches" if agrees else "DOES NOT match" if seen else "has no witness to compare with"
    body = f"""### Local mode: the Node's GPUs on a real GPU machine

`python benchmarks/gpu_check.py` (the agent's node detection, loaded without Ray).

| source | GPUs | product |
|---|---|---|
| Node `allocatable["{node_info.GPU_RESOURCE}"]` / labels | {reported} | {product} |
{rows}

Node labels: {", ".join(f"`{k}={v}`" for k, v in sorted(labels.items())) or "none"}.
Node allocatable: {", ".join(f"`{k}={v}`" for k, v in sorted(allocatable.items()))}.
The GPU count the Node would report {verdict} the machine's.
"""
    return body, agrees


def record(copy: Path) -> None:
    """Take the gpu section from ``copy`` (a RESULTS.md written on the GPU machine) into ours."""
    start, end = markers(SECTION)
    text = copy.read_text()
    if start not in text or end not in text:
        raise SystemExit(f"{copy} has no {SECTION} section")
    write_block(SECTION, start + text.split(start, 1)[1].split(end, 1)[0] + end)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, help="splice the gpu section of this RESULTS.md copy in")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = parser.parse_args()
    if args.record is not None:
        record(args.record)
        return 0
    body, agrees = check()
    print(body)
    if not args.no_write:
        write_section(SECTION, body)
        out = os.environ.get("OUT")
        if out:
            shutil.copy(RESULTS, Path(out) / "RESULTS.md")
    return 0 if agrees else 1


if __name__ == "__main__":
    sys.exit(main())
