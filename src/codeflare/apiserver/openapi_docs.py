"""Serves OpenAPI v2/v3 documents for the registry's resources (built by :mod:`openapi`)."""

from __future__ import annotations

from typing import Any

from codeflare.apiserver.resources import ResourceRegistry


class OpenAPIDocuments:
    """Answers ``/openapi/v2``, ``/openapi/v3`` and ``/openapi/v3/<api path>``."""

    def __init__(self, registry: ResourceRegistry) -> None:
        self.registry = registry

    def document(self, path: str, query: Any) -> dict[str, Any] | None:
        return None
