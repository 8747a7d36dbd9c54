"""The CLI tests share the SDK tests' local-mode fixture (one fresh local mode per module)."""

from __future__ import annotations

from tests.sdk.conftest import local

__all__ = ["local"]
