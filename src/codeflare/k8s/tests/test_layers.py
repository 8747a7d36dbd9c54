"""The layer contract (``[tool.importlinter]`` in pyproject.toml) holds, and it catches violations.

``lint-imports`` runs on the real tree, then on throw-away copies of it with one deliberate
violation each: a lazy import inside a function, an import under ``TYPE_CHECKING``, and an import
between two independent siblings. Each copy must fail with the offending import named, so the
contract that ``scripts/test`` runs is known to see the imports a top-level check would miss.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
PACKAGE = REPO / "src" / "codeflare"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(config: Path, source_root: Path) -> subprocess.CompletedProcess[str]:
    """Run the contract of ``config`` over the ``codeflare`` package found under ``source_root``."""
    assert LINT_IMPORTS.exists(), f"{LINT_IMPORTS} missing: install the test extra (import-linter)"
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(config)],
        cwd=source_root, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A copy of the source tree (code only) to break on purpose; returns its ``src`` directory."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "codeflare", ignore=shutil.ignore_patterns("__pycache__", "*.yaml"))
    return src


def inject(module: Path, code: str) -> None:
    module.write_text(module.read_text() + "\n\n" + code + "\n")


def test_the_real_tree_keeps_the_layer_contract() -> None:
    result = lint_imports(REPO / "pyproject.toml", REPO / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


VIOLATIONS = [
    pytest.param(  # a lazy import, inside a function
        "k8s/quantity.py",
        "def _uses_the_sdk() -> object:\n    from codeflare.sdk import cluster\n\n    return cluster",
        ["codeflare.k8s is not allowed to import codeflare.sdk",
         "codeflare.k8s.quantity -> codeflare.sdk.cluster"],
        id="lazy-import",
    ),
    pytest.param(  # an import for type checking only
        "kube/informer.py",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from codeflare.operator import context",
        ["codeflare.kube is not allowed to import codeflare.operator"],
        id="type-checking-import",
    ),
    pytest.param(  # two independent siblings of one layer
        "scheduling/model.py",
        "def _talks_to_the_api() -> object:\n    from codeflare.kube import client\n\n    return client",
        ["codeflare.scheduling is not allowed to import codeflare.kube"],
        id="sibling-import",
    ),
]


@pytest.mark.parametrize(("module", "code", "reported"), VIOLATIONS)
def test_a_deliberate_violation_breaks_the_contract(
    tree_copy: Path, module: str, code: str, reported: list[str]
) -> None:
    inject(tree_copy / "codeflare" / module, code)
    result = lint_imports(REPO / "pyproject.toml", tree_copy)
    assert result.returncode == 1, result.stdout
    for line in reported:
        assert line in result.stdout
