"""What a request asks for: its path parsed into attributes, its query options, its body decoded.

A Kubernetes REST path (``/api/v1/namespaces/ns/pods/name/status``, ``/apis/g/v/...``, legacy
``/watch/`` paths) becomes a :class:`ResourcePath`, then - with the HTTP method - the
:class:`RequestAttributes` RBAC and admission speak. Query options (dryRun, fieldValidation,
fieldManager, booleans and integers) are checked with Kubernetes' messages, and bodies are
decoded from JSON, YAML or (for the kinds kubectl sends so) protobuf. Every failure is an
:class:`~codeflare.apiserver.errors.ApiError`; nothing here touches objects or the store.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import yaml
from aiohttp import web

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestAttributes, RequestContext, UserInfo
from codeflare.apiserver.endpoints import bodies, protowire
from codeflare.apiserver.registry.resources import ResourceType

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"


Authorizer = Callable[[UserInfo, RequestAttributes], Awaitable[str | None]]
# A create-only endpoint that is not stored (reviews, TokenRequest): (rt, attrs, ctx, body) -> answer
VirtualCreate = Callable[[ResourceType, RequestAttributes, RequestContext, Any], Awaitable[dict[str, Any]]]


async def allow_all(user: UserInfo, attrs: RequestAttributes) -> str | None:
    """The authorizer used until RBAC is switched on: everything authenticated is allowed."""
    return None


def not_found() -> errors.ApiError:
    """The 404 for a path that names no served resource (Kubernetes' wording)."""
    return errors.ApiError(404, "NotFound", "the server could not find the requested resource")


@dataclass(frozen=True)
class ResourcePath:
    """A resource request's path: group, version, resource and where in it."""

    group: str
    version: str
    plural: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    watch: bool = False  # the legacy /watch/ form


def parse_resource_path(segments: list[str]) -> ResourcePath:
    """Split ``api/v1/...`` or ``apis/<g>/<v>/...`` segments (past discovery) into their parts."""
    core = segments[0] == "api"
    head = 2 if core else 3
    group = "" if core else segments[1]
    version = segments[1] if core else segments[2]
    rest = segments[head:]
    watch = False
    if rest[0] == "watch":
        watch = True
        rest = rest[1:]
    namespace = ""
    if (
        len(rest) >= 3
        and rest[0] == "namespaces"
        and not (len(rest) == 3 and rest[2] in ("status", "finalize"))
    ):
        namespace = rest[1]
        rest = rest[2:]
    if not rest or len(rest) > 3:
        raise not_found()
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    return ResourcePath(group, version, rest[0], namespace, name, sub, watch)


def verb_of(request: web.Request, name: str, watch_path: bool) -> str:
    """The Kubernetes verb of a resource request (``get``, ``list``, ``watch``, ``create``, ...)."""
    method = request.method
    if method in ("GET", "HEAD"):
        if watch_path or query_bool(request.query, "watch"):
            return "watch"
        return "get" if name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    raise errors.method_not_allowed()


def query_bool(query: Any, name: str) -> bool:
    value = query.get(name, "")
    if value in ("", "false", "False", "0"):
        return False
    if value in ("true", "True", "1"):
        return True
    raise errors.bad_request(f"{name}: invalid boolean value {value!r}")


def query_int(query: Any, name: str, minimum: int = 0) -> int | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except ValueError as exc:
        raise errors.bad_request(f"{name}: invalid integer value {value!r}") from exc
    if number < minimum:
        raise errors.bad_request(f"{name}: must be >= {minimum}")
    return number


def request_context(request: web.Request, user: UserInfo) -> RequestContext:
    """The write options of a request: dryRun, fieldValidation, fieldManager, user agent."""
    query = request.query
    dry_run = query.getall("dryRun", [])
    for value in dry_run:
        if value != "All":
            raise errors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    validation = query.get("fieldValidation", "")
    if validation and validation not in ("Strict", "Warn", "Ignore"):
        raise errors.bad_request(
            f'fieldValidation: Unsupported value: "{validation}": '
            'supported values: "Ignore", "Strict", "Warn"'
        )
    manager = query.get("fieldManager", "")
    if len(manager) > 128:
        raise errors.bad_request("fieldManager: Too long: may not be longer than 128")
    return RequestContext(
        user=user,
        dry_run=bool(dry_run),
        field_manager=manager,
        field_validation=validation or "Warn",
        user_agent=request.headers.get("User-Agent", ""),
    )


def scratch(ctx: RequestContext) -> RequestContext:
    """A copy of ``ctx`` collecting its own warnings: those of a prepared write, kept only if that
    write is the one committed (a write redone after a mutating webhook repeats them)."""
    return dataclasses.replace(ctx, warnings=[])


def attrs_of(rt: ResourceType, namespace: str, name: str, sub: str = "") -> RequestAttributes:
    """Attributes of an object write the server makes on a request's behalf (admission's view)."""
    return RequestAttributes("", "", True, rt.group, rt.version, rt.plural, sub, namespace, name)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


# Media types a body may come in (kube-apiserver's serializers; a missing Content-Type is the
# first, JSON, as in its ``NegotiateInputSerializerForMediaType``). Patch bodies come in their
# patch types, chosen by the handler before the body is read.
WRITE_MEDIA_TYPES = (JSON, "application/yaml", PROTOBUF)
_YAML_TYPES = frozenset({"application/yaml", "application/apply-patch+yaml"})
_JSON_TYPES = frozenset(
    {
        JSON,
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    }
)


def parse_body(raw: bytes, content_type: str) -> Any:
    """Decode a JSON or YAML body; another media type is 415, a malformed body 400."""
    media = media_type(content_type) or JSON
    if media not in _JSON_TYPES and media not in _YAML_TYPES:
        supported = WRITE_MEDIA_TYPES if media != PROTOBUF else WRITE_MEDIA_TYPES[:2]
        raise errors.unsupported_media_type(", ".join(supported))
    if not raw.strip():
        raise errors.bad_request("the request body is empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.bad_request("the request body is not valid UTF-8") from exc
    try:
        if media in _YAML_TYPES:
            return bodies.decode_yaml(text)
        return bodies.decode_json(text)
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError, ValueError) as exc:
        raise errors.bad_request(f"the request body could not be decoded: {str(exc)[:200]}") from exc


async def read_body(request: web.Request, rt: ResourceType | None = None) -> Any:
    """The decoded body; with ``rt``, protobuf bodies of the built-in kinds kubectl creates too."""
    raw = await request.read()
    content_type = request.headers.get("Content-Type", JSON)
    if rt is not None and media_type(content_type) == PROTOBUF:
        return protowire.decode_request(raw, rt.kind, rt.api_version)
    return parse_body(raw, content_type)
