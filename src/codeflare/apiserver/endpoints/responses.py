"""How answers go back: JSON bodies with Warning headers, Status errors, lists, objects or Tables.

Bodies are compact JSON with exactly ``Content-Type: application/json`` (some clients compare the
header verbatim); warnings collected during a write become RFC 9111 ``Warning: 299`` headers;
an :class:`~codeflare.apiserver.errors.ApiError` becomes its ``Status`` with its code. A client
that asks for ``as=Table`` gets the object or list rendered by :mod:`tables`. Nothing here
decides what to answer.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext
from codeflare.apiserver.endpoints import tables
from codeflare.apiserver.endpoints.request import JSON
from codeflare.apiserver.registry.listing import ListResult
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.storage.codec import dumps_bytes


def json_response(body: Any, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    # exactly "application/json", no charset: some clients (lightkube) compare the header verbatim
    resp = web.Response(body=dumps_bytes(body), status=status, headers={"Content-Type": JSON})
    for warning in warnings or []:
        resp.headers.add("Warning", warning_header(warning))
    return resp


def warning_header(warning: str) -> str:
    """A ``Warning`` header value as kube-apiserver writes it: code 299, agent "-", quoted text.

    Control characters become spaces (as kube-apiserver sanitizes warning text) and quotes and
    backslashes are escaped, so no message - an admission webhook's included - can break the
    header or the connection.
    """
    printable = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in warning)
    text = printable.replace("\\", "\\\\").replace('"', '\\"')  # RFC 9111 quoted-string
    return f'299 - "{text}"'


def error_response(err: errors.ApiError) -> web.Response:
    return json_response(err.status(), err.code)


def success_status(details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``Status`` of a successful delete (of a collection, or of a built-in object)."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details is not None:
        body["details"] = details
    return body


def render_object(
    request: web.Request, rt: ResourceType, obj: dict[str, Any], status: int, ctx: RequestContext
) -> web.Response:
    """One object as JSON, or as a Table when the client asks for one."""
    if tables.wants_table(request.headers.get("Accept", "")):
        rv = obj.get("metadata", {}).get("resourceVersion", "")
        include = request.query.get("includeObject", "Metadata")
        return json_response(tables.table(rt, [obj], rv, include), status, ctx.warnings)
    return json_response(obj, status, ctx.warnings)


def render_list(request: web.Request, rt: ResourceType, page: ListResult) -> web.Response:
    """A page of a list as ``<Kind>List`` JSON (items serialized once each), or as a Table."""
    rv = str(page.resource_version)
    if tables.wants_table(request.headers.get("Accept", "")):
        include = request.query.get("includeObject", "Metadata")
        return json_response(tables.table(rt, page.items, rv, include, page.continue_token))
    meta: dict[str, Any] = {"resourceVersion": rv}
    if page.continue_token:
        meta["continue"] = page.continue_token
    if page.remaining is not None:
        meta["remainingItemCount"] = page.remaining
    head = dumps_bytes({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
    items = b",".join(dumps_bytes(item) for item in page.items)
    body = head[:-1] + b',"items":[' + items + b"]}"
    return web.Response(body=body, headers={"Content-Type": JSON})
