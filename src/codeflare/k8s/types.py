"""The one alias for a Kubernetes object as the JSON API carries it: a ``dict[str, Any]``.

Objects travel between the client, informers, controllers and builders as plain decoded JSON;
typing them all as ``Obj`` says "a Kubernetes object or a part of one" without pretending to
know its schema. Typed models live in ``codeflare.api``, not here.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
"""A decoded Kubernetes object (or one of its nested maps), as the API serves it."""
