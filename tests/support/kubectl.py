"""Real ``kubectl`` against a test's API server: one runner for the kubectl test modules."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.apiserver import ServerProcess

KUBECTL = shutil.which("kubectl")
#: CI installs kubectl (scripts/test): there a missing binary fails the kubectl tests instead of
#: skipping them; a developer machine without kubectl skips them, saying so.
KUBECTL_REQUIRED = bool(os.environ.get("CI"))
# module marks for every kubectl test module
NEEDS_KUBECTL = [
    pytest.mark.kubectl,
    pytest.mark.skipif(KUBECTL is None and not KUBECTL_REQUIRED, reason="no kubectl binary on PATH"),
]


class Kubectl:
    """Runs kubectl with the server's kubeconfig and a private cache directory."""

    def __init__(self, server: ServerProcess, workdir: Path) -> None:
        self.workdir = workdir
        self.env = {**os.environ, "KUBECONFIG": str(server.kubeconfig), "HOME": str(workdir)}
        self.base = [str(KUBECTL), "--cache-dir", str(workdir / "cache")]

    def run(self, *args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [*self.base, *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
        return proc

    def json(self, *args: str) -> Any:
        """``kubectl ARGS -o json``, parsed."""
        return json.loads(self.run(*args, "-o", "json").stdout)

    def get(self, *args: str) -> Any:
        """``kubectl get ARGS -o json``, parsed."""
        return self.json("get", *args)

    def write(self, name: str, obj: dict[str, Any]) -> str:
        """``obj`` as a YAML file in the work directory; its path."""
        return self.file(name, yaml.safe_dump(obj).encode())

    def file(self, name: str, content: bytes) -> str:
        path = self.workdir / name
        path.write_bytes(content)
        return str(path)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.base, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
