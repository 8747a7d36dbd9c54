"""What a test does when the machine lacks something it needs (a binary, root, a namespace kind).

On a developer's machine it is skipped, saying what is missing. Under CI (``CI`` set, as `.ci/run`
runs) it fails instead: CI's machine is the one that must have everything, so a missing piece
there is a broken setup to fix, never a silently smaller test suite.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skip (developer machine) or fail (CI) the current test because ``reason``."""
    if os.environ.get("CI"):
        pytest.fail(f"required under CI: {reason}")
    pytest.skip(reason)
