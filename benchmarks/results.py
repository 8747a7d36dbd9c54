"""Writes one benchmark's section of benchmarks/RESULTS.md, stamped with the machine and date.

Each benchmark owns the text between ``<!-- section:NAME -->`` and ``<!-- end:NAME -->``; other
sections are left untouched, so benchmarks can be rerun one at a time.
"""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def machine() -> str:
    """A one-line description of this machine: CPU model, cores, memory, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = int(line.split()[1]) / 1024 / 1024
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB, Python {platform.python_version()}"


def markers(name: str) -> tuple[str, str]:
    """The comments that open and close section ``name``."""
    return f"<!-- section:{name} -->", f"<!-- end:{name} -->"


def write_section(name: str, body: str) -> None:
    """Replace section ``name`` of RESULTS.md with ``body`` plus a machine/date stamp."""
    start, end = markers(name)
    stamp = f"_Measured {datetime.date.today().isoformat()} on {machine()}._\n\n"
    write_block(name, f"{start}\n{stamp}{body.strip()}\n{end}")


def write_block(name: str, block: str) -> None:
    """Put ``block`` (markers included) in place of section ``name`` of RESULTS.md, or append it."""
    start, end = markers(name)
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)
