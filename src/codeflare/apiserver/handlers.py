"""The HTTP face of the embedded API server: routing, content negotiation, watches and errors.

Parses Kubernetes REST paths (``/api/v1/namespaces/ns/pods/name/status``, ``/apis/g/v/...``,
legacy ``/watch/`` paths) into request attributes, authenticates the bearer token, decodes bodies
(JSON or YAML, bounded size), calls :class:`ObjectAPI`, and renders objects, lists, Tables,
watch streams and ``Status`` errors. Every failure becomes a Kubernetes Status with the right
code; nothing a client sends may produce a 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import yaml
from aiohttp import web

from codeflare.apiserver import bodies, discovery, errors, protowire, tables
from codeflare.apiserver.admission import Admission, AdmissionRequest
from codeflare.apiserver.auth import ANONYMOUS, TokenAuthenticator
from codeflare.apiserver.context import RequestContext, UserInfo
from codeflare.apiserver.objects import ObjectAPI
from codeflare.apiserver.patch import PATCH_CONTENT_TYPES
from codeflare.apiserver.resources import ResourceType
from codeflare.apiserver.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.watch import WatchFilter, WatchHub

log = logging.getLogger(__name__)

MAX_BODY = 3 * 1024 * 1024
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})
DEFAULT_WATCH_TIMEOUT = 1800.0
_JSON = "application/json"


@dataclass
class RequestAttributes:
    """What a request does, in the terms RBAC and admission speak."""

    verb: str
    path: str
    resource_request: bool
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


Authorizer = Callable[[UserInfo, RequestAttributes], Awaitable[str | None]]
# A create-only endpoint that is not stored (reviews, TokenRequest): (rt, attrs, ctx, body) -> answer
VirtualCreate = Callable[[ResourceType, RequestAttributes, RequestContext, Any], Awaitable[dict[str, Any]]]


async def allow_all(user: UserInfo, attrs: RequestAttributes) -> str | None:
    """The authorizer used until RBAC is switched on: everything authenticated is allowed."""
    return None


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def json_response(body: Any, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    # exactly "application/json", no charset: some clients (lightkube) compare the header verbatim
    resp = web.Response(body=_dumps(body).encode(), status=status, headers={"Content-Type": _JSON})
    for warning in warnings or []:
        text = warning.replace("\\", "\\\\").replace('"', '\\"')  # RFC 9111 quoted-string
        resp.headers.add("Warning", f'299 - "{text}"')
    return resp


def error_response(err: errors.ApiError) -> web.Response:
    return json_response(err.status(), err.code)


def _query_bool(query: Any, name: str) -> bool:
    value = query.get(name, "")
    if value in ("", "false", "False", "0"):
        return False
    if value in ("true", "True", "1"):
        return True
    raise errors.bad_request(f"{name}: invalid boolean value {value!r}")


def _query_int(query: Any, name: str, minimum: int = 0) -> int | None:
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


def parse_body(raw: bytes, content_type: str) -> Any:
    """Decode a JSON or YAML body; anything else is 415, malformed is 400."""
    if not raw.strip():
        raise errors.bad_request("the request body is empty")
    media = content_type.split(";", 1)[0].strip().lower()
    if media in ("application/vnd.kubernetes.protobuf", "application/cbor", "application/apply-patch+cbor"):
        raise errors.unsupported_media_type("application/json, application/yaml")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errors.bad_request("the request body is not valid UTF-8") from exc
    try:
        if media in ("application/yaml", "application/apply-patch+yaml", "text/yaml"):
            return bodies.decode_yaml(text)
        return bodies.decode_json(text)
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError, ValueError) as exc:
        raise errors.bad_request(f"the request body could not be decoded: {str(exc)[:200]}") from exc


def _dry(ctx: RequestContext) -> RequestContext:
    """A dry-run copy of ``ctx`` that collects its own warnings (the real write repeats them)."""
    return dataclasses.replace(ctx, dry_run=True, warnings=[])


def _attrs_of(rt: ResourceType, namespace: str, name: str, sub: str = "") -> RequestAttributes:
    return RequestAttributes("", "", True, rt.group, rt.version, rt.plural, sub, namespace, name)


class ApiHandlers:
    """Serves the Kubernetes REST API over an :class:`ObjectAPI`."""

    def __init__(
        self,
        api: ObjectAPI,
        hub: WatchHub,
        authn: TokenAuthenticator,
        server_address: str,
        *,
        authorizer: Authorizer = allow_all,
        bookmark_interval: float = 15.0,
        openapi: Any = None,
        admission: Admission | None = None,
        virtual: dict[tuple[str, str], VirtualCreate] | None = None,
    ) -> None:
        self.api = api
        self.admission = admission
        self.virtual = dict(virtual or {})
        self.hub = hub
        self.authn = authn
        self.authorizer = authorizer
        self.server_address = server_address
        self.bookmark_interval = bookmark_interval
        self.openapi = openapi
        self.ready = True

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._guard])
        app.router.add_route("*", "/{tail:.*}", self.dispatch)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            return await handler(request)
        except errors.ApiError as err:
            return error_response(err)
        except web.HTTPRequestEntityTooLarge:
            return json_response(
                errors.ApiError(413, "RequestEntityTooLarge", "the request is too large").status(), 413
            )
        except web.HTTPException:
            raise
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("internal error serving %s %s", request.method, request.path_qs)
            return json_response(
                errors.ApiError(500, "InternalError", "an internal error occurred").status(), 500
            )

    # -- dispatch -------------------------------------------------------------------------------
    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in ("/healthz", "/livez", "/readyz") or path.startswith(("/healthz/", "/livez/", "/readyz/")):
            return web.Response(text="ok" if self.ready else "not ready", status=200 if self.ready else 503)
        user = self.authn.authenticate(request.headers.get("Authorization"))
        if user is None:
            if path not in PUBLIC_PATHS:
                raise errors.unauthorized()
            user = ANONYMOUS
        request["user"] = user
        segments = [s for s in path.split("/") if s]
        if not segments or segments[0] not in ("api", "apis"):
            return await self._non_resource(request, user, segments)
        return await self._resource(request, user, segments)

    async def _authorize(self, user: UserInfo, attrs: RequestAttributes) -> None:
        denial = await self.authorizer(user, attrs)
        if denial is None:
            return
        if attrs.resource_request:
            what = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
            scope = f' in the namespace "{attrs.namespace}"' if attrs.namespace else " at the cluster scope"
            name = f' "{attrs.name}"' if attrs.name else ""
            qualified = attrs.resource + (f".{attrs.group}" if attrs.group else "")
            msg = (
                f'{qualified}{name} is forbidden: User "{user.username}" '
                f'cannot {attrs.verb} resource "{what}" in API group "{attrs.group}"{scope}'
            )
            if denial:
                msg += f": {denial}"
            raise errors.forbidden(msg, attrs.resource, attrs.name, attrs.group)
        raise errors.forbidden(f'forbidden: User "{user.username}" cannot {attrs.verb} path "{attrs.path}"')

    async def _non_resource(
        self, request: web.Request, user: UserInfo, segments: list[str]
    ) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            raise errors.method_not_allowed()
        await self._authorize(user, RequestAttributes("get", request.path, False))
        path = "/" + "/".join(segments)
        if path == "/version":
            return json_response(discovery.SERVER_VERSION)
        if segments and segments[0] == "openapi" and self.openapi is not None:
            doc = self.openapi.document(path, request.query)
            if doc is None:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            accept = request.headers.get("Accept", "")
            if "protobuf" in accept and "json" not in accept and "*/*" not in accept:
                # client-go asks /openapi/v2 in protobuf only; JSON under that request would
                # fail to parse, and 406 is the honest answer (we serve these documents as JSON)
                raise errors.ApiError(406, "NotAcceptable", "only application/json is supported")
            return json_response(doc)
        raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")

    def _discovery(self, segments: list[str]) -> dict[str, Any] | None:
        registry = self.api.registry
        if segments == ["api"]:
            return discovery.core_versions(self.server_address)
        if segments == ["apis"]:
            return discovery.group_list(registry)
        if len(segments) == 2 and segments[0] == "api":
            return discovery.resource_list(registry, "", segments[1])
        if len(segments) == 2:
            return discovery.group(registry, segments[1])
        if len(segments) == 3 and segments[0] == "apis":
            return discovery.resource_list(registry, segments[1], segments[2])
        return None

    async def _resource(
        self, request: web.Request, user: UserInfo, segments: list[str]
    ) -> web.StreamResponse:
        core = segments[0] == "api"
        head = 2 if core else 3
        if len(segments) <= head:
            if request.method not in ("GET", "HEAD"):
                raise errors.method_not_allowed()
            await self._authorize(user, RequestAttributes("get", request.path, False))
            doc = self._discovery(segments)
            if doc is None:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            return json_response(doc)
        group = "" if core else segments[1]
        version = segments[1] if core else segments[2]
        rest = segments[head:]
        watch_path = False
        if rest[0] == "watch":
            watch_path = True
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
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        rt = self.api.registry.get(group, version, plural)
        if rt is None:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        if namespace and not rt.namespaced:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub and sub not in rt.subresources():
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        if rt.namespaced and name and not namespace:
            raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
        verb = self._verb(request, name, watch_path)
        attrs = RequestAttributes(verb, request.path, True, group, version, plural, sub, namespace, name)
        await self._authorize(user, attrs)
        ctx = self._context(request, user)
        return await self._serve(request, rt, attrs, ctx)

    @staticmethod
    def _verb(request: web.Request, name: str, watch_path: bool) -> str:
        method = request.method
        if method in ("GET", "HEAD"):
            if watch_path or _query_bool(request.query, "watch"):
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

    @staticmethod
    def _context(request: web.Request, user: UserInfo) -> RequestContext:
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

    # -- verbs ----------------------------------------------------------------------------------
    async def _body(self, request: web.Request, rt: ResourceType | None = None) -> Any:
        """The decoded body; with ``rt``, protobuf bodies of the built-in kinds kubectl creates too."""
        raw = await request.read()
        content_type = request.headers.get("Content-Type", _JSON)
        media = content_type.split(";", 1)[0].strip().lower()
        if rt is not None and media == "application/vnd.kubernetes.protobuf":
            return protowire.decode_request(raw, rt.kind, rt.api_version)
        return parse_body(raw, content_type)

    def _render(
        self, request: web.Request, rt: ResourceType, obj: dict[str, Any], status: int, ctx: RequestContext
    ) -> web.Response:
        if tables.wants_table(request.headers.get("Accept", "")):
            rv = obj.get("metadata", {}).get("resourceVersion", "")
            include = request.query.get("includeObject", "Metadata")
            return json_response(tables.table(rt, [obj], rv, include), status, ctx.warnings)
        return json_response(obj, status, ctx.warnings)

    async def _serve(
        self, request: web.Request, rt: ResourceType, attrs: RequestAttributes, ctx: RequestContext
    ) -> web.StreamResponse:
        api = self.api
        verb, ns, name, sub = attrs.verb, attrs.namespace, attrs.name, attrs.subresource
        virtual = self.virtual.get((rt.key, sub))
        if virtual is not None:
            if verb != "create":
                raise errors.method_not_allowed()
            content_type = request.headers.get("Content-Type", _JSON)
            if content_type.split(";", 1)[0].strip().lower() == "application/vnd.kubernetes.protobuf":
                kind = "TokenRequest" if sub == "token" else rt.kind  # kubectl sends these as protobuf
                body = protowire.decode_request(await request.read(), kind)
            else:
                body = await self._body(request)
            answer = await virtual(rt, attrs, ctx, body)
            return json_response(answer, 201, ctx.warnings)
        if verb == "get":
            if sub == "scale":
                return json_response(api.get_scale(rt, ns, name))
            return self._render(request, rt, api.get(rt, ns, name), 200, ctx)
        if verb == "list":
            return self._list(request, rt, ns or None)
        if verb == "watch":
            return await self._watch(request, rt, ns or None, name)
        if verb == "create":
            if name or sub:
                raise errors.method_not_allowed()
            if rt.namespaced and not ns:
                raise errors.ApiError(404, "NotFound", "the server could not find the requested resource")
            body = await self._body(request, rt)  # kubectl's generators (create configmap, ...) send protobuf
            if self._admitting("CREATE", rt, "", ctx):
                candidate = api.create(rt, ns, copy.deepcopy(body), _dry(ctx))
                body = await self._admit("CREATE", rt, attrs, candidate, None, ctx, "CreateOptions")
            created = api.create(rt, ns, body, ctx)
            return self._render(request, rt, created, 201, ctx)
        if verb in ("update", "patch") and not name:
            raise errors.method_not_allowed()  # PUT/PATCH address one object, never a collection
        if verb == "update":
            body = await self._body(request)
            if sub == "scale":
                return json_response(api.update_scale(rt, ns, name, body, ctx), 200, ctx.warnings)
            updated = await self._update(rt, attrs, body, ctx, "" if sub == "finalize" else sub)
            return self._render(request, rt, updated, 200, ctx)
        if verb == "patch":
            return await self._patch(request, rt, ns, name, sub, ctx)
        if verb == "delete":
            return await self._delete(request, rt, ns, name, ctx)
        if verb == "deletecollection":
            if "deletecollection" not in rt.verbs:
                raise errors.method_not_allowed()
            labels, fields = self._selectors(request, rt)
            options = await self._delete_options(request)
            propagation = options.get("propagationPolicy", "")
            if self._admitting("DELETE", rt, "", ctx):
                await self._delete_each_admitted(rt, ns, ctx, labels, fields, propagation)
            else:
                api.delete_collection(rt, ns or None, ctx, labels, fields, propagation)
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
        raise errors.method_not_allowed()

    # -- admission ------------------------------------------------------------------------------
    # The object API is synchronous: a write under admission is first computed as a dry run, the
    # candidate is admitted (webhooks may take seconds and may mutate it), then committed. Other
    # requests interleave while webhooks run, so the commit is guarded by the resourceVersion the
    # candidate was computed from: updates answer 409 when it moved, patches are recomputed.
    def _admitting(self, operation: str, rt: ResourceType, sub: str, ctx: RequestContext) -> bool:
        return self.admission is not None and self.admission.wants(operation, rt, sub, ctx)

    async def _admit(
        self,
        operation: str,
        rt: ResourceType,
        attrs: RequestAttributes,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        ctx: RequestContext,
        options_kind: str,
    ) -> Any:
        assert self.admission is not None
        name = attrs.name or str(((obj or {}).get("metadata") or {}).get("name") or "")
        req = AdmissionRequest(
            operation, rt, attrs.subresource, attrs.namespace, name, obj, old, ctx, options_kind
        )
        return await self.admission.admit(req)

    async def _update(
        self, rt: ResourceType, attrs: RequestAttributes, body: Any, ctx: RequestContext, sub: str
    ) -> dict[str, Any]:
        api, ns, name = self.api, attrs.namespace, attrs.name
        if not self._admitting("UPDATE", rt, sub, ctx):
            return api.update(rt, ns, name, body, ctx, subresource=sub)
        base = api.get(rt, ns, name)
        candidate = api.update(rt, ns, name, copy.deepcopy(body), _dry(ctx), subresource=sub)
        admitted = await self._admit("UPDATE", rt, attrs, candidate, base, ctx, "UpdateOptions")
        current = api.store.get(rt.key, ns, name)
        base_rv = base["metadata"]["resourceVersion"]
        if current is None:
            raise errors.not_found(rt.plural, name, rt.group)
        if current["metadata"]["resourceVersion"] != base_rv:
            raise errors.conflict(rt.plural, name, rt.group)
        if admitted == candidate:
            return api.update(rt, ns, name, body, ctx, subresource=sub)
        admitted["metadata"]["resourceVersion"] = base_rv
        return api.update(rt, ns, name, admitted, ctx, subresource=sub, require_version=True)

    async def _patch_admitted(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        patch_type: str,
        body: Any,
        ctx: RequestContext,
        sub: str,
        force: bool,
    ) -> tuple[dict[str, Any], bool]:
        api = self.api
        attrs = _attrs_of(rt, ns, name, sub)
        for _ in range(5):
            base = api.store.get(rt.key, ns, name)
            operation = "CREATE" if base is None else "UPDATE"
            if not self._admitting(operation, rt, sub, ctx):
                return api.patch(rt, ns, name, patch_type, body, ctx, subresource=sub, force=force)
            candidate, created = api.patch(
                rt, ns, name, patch_type, copy.deepcopy(body), _dry(ctx), subresource=sub, force=force
            )
            old = api.present(rt, base) if base is not None else None
            admitted = await self._admit(operation, rt, attrs, candidate, old, ctx, "PatchOptions")
            current = api.store.get(rt.key, ns, name)
            base_rv = base["metadata"]["resourceVersion"] if base is not None else None
            current_rv = current["metadata"]["resourceVersion"] if current is not None else None
            if current_rv != base_rv:
                continue  # changed while the webhooks ran: recompute the patch on the new object
            if admitted == candidate:
                return api.patch(rt, ns, name, patch_type, body, ctx, subresource=sub, force=force)
            if created:
                return api.create(rt, ns, admitted, ctx), True
            admitted["metadata"]["resourceVersion"] = base_rv
            return api.update(rt, ns, name, admitted, ctx, subresource=sub, require_version=True), False
        raise errors.conflict(rt.plural, name, rt.group)

    async def _delete_each_admitted(
        self,
        rt: ResourceType,
        ns: str,
        ctx: RequestContext,
        labels: LabelSelector | None,
        fields: FieldSelector | None,
        propagation: str,
    ) -> None:
        for obj in self.api.list_objects(rt, ns or None, labels, fields).items:
            meta = obj["metadata"]
            obj_ns, obj_name = meta.get("namespace", ""), meta["name"]
            await self._admit("DELETE", rt, _attrs_of(rt, obj_ns, obj_name), None, obj, ctx, "DeleteOptions")
            try:
                self.api.delete(rt, obj_ns, obj_name, ctx, propagation)
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise

    def _selectors(
        self, request: web.Request, rt: ResourceType
    ) -> tuple[LabelSelector | None, FieldSelector | None]:
        query = request.query
        labels = LabelSelector.parse(query["labelSelector"]) if query.get("labelSelector") else None
        fields = (
            FieldSelector.parse(query["fieldSelector"], rt.field_selectors)
            if query.get("fieldSelector")
            else None
        )
        return labels, fields

    def _list(self, request: web.Request, rt: ResourceType, namespace: str | None) -> web.Response:
        labels, fields = self._selectors(request, rt)
        limit = _query_int(request.query, "limit") or 0
        page = self.api.list_objects(rt, namespace, labels, fields, limit, request.query.get("continue", ""))
        rv = str(page.resource_version)
        if tables.wants_table(request.headers.get("Accept", "")):
            include = request.query.get("includeObject", "Metadata")
            return json_response(tables.table(rt, page.items, rv, include, page.continue_token))
        meta: dict[str, Any] = {"resourceVersion": rv}
        if page.continue_token:
            meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
        head = _dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
        items = ",".join(_dumps(item) for item in page.items)
        text = head[:-1] + ',"items":[' + items + "]}"
        return web.Response(body=text.encode(), headers={"Content-Type": _JSON})

    async def _patch(
        self, request: web.Request, rt: ResourceType, ns: str, name: str, sub: str, ctx: RequestContext
    ) -> web.Response:
        media = request.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        patch_type = PATCH_CONTENT_TYPES.get(media)
        if patch_type is None:
            raise errors.unsupported_media_type(", ".join(sorted(PATCH_CONTENT_TYPES)))
        body = await self._body(request)
        force = _query_bool(request.query, "force")
        if force and patch_type != "apply":
            raise errors.bad_request("force: Forbidden: may not be specified for non-apply patch")
        if sub == "scale":
            return json_response(
                self.api.update_scale(rt, ns, name, body, ctx, patch_type), 200, ctx.warnings
            )
        obj, created = await self._patch_admitted(rt, ns, name, patch_type, body, ctx, sub, force)
        return self._render(request, rt, obj, 201 if created else 200, ctx)

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        options: dict[str, Any] = {}
        raw = await request.read()
        if raw.strip():
            body = parse_body(raw, request.headers.get("Content-Type", _JSON))
            if not isinstance(body, dict):
                raise errors.bad_request("DeleteOptions must be an object")
            options.update(body)
        query = request.query
        if query.get("propagationPolicy"):
            options["propagationPolicy"] = query["propagationPolicy"]
        if query.get("orphanDependents") and "propagationPolicy" not in options:
            options["propagationPolicy"] = (
                "Orphan" if _query_bool(query, "orphanDependents") else "Background"
            )
        if options.get("orphanDependents") is True and "propagationPolicy" not in options:
            options["propagationPolicy"] = "Orphan"
        _query_int(query, "gracePeriodSeconds")
        if options.get("propagationPolicy") is not None and not isinstance(options["propagationPolicy"], str):
            raise errors.bad_request("propagationPolicy must be a string")
        if options.get("preconditions") is not None and not isinstance(options["preconditions"], dict):
            raise errors.bad_request("preconditions must be an object")
        return options

    async def _delete(
        self, request: web.Request, rt: ResourceType, ns: str, name: str, ctx: RequestContext
    ) -> web.Response:
        options = await self._delete_options(request)
        if options.get("dryRun"):
            ctx.dry_run = True
        if self._admitting("DELETE", rt, "", ctx):
            old = self.api.get(rt, ns, name)
            await self._admit("DELETE", rt, _attrs_of(rt, ns, name), None, old, ctx, "DeleteOptions")
        result = self.api.delete(
            rt, ns, name, ctx, options.get("propagationPolicy") or "", options.get("preconditions")
        )
        if result.gone and not rt.custom:
            meta = result.obj["metadata"]
            details = {"name": meta["name"], "kind": rt.plural, "uid": meta.get("uid", "")}
            if rt.group:
                details["group"] = rt.group
            return json_response(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": details,
                }
            )
        return json_response(result.obj, 200 if result.gone else 202)

    # -- watch ----------------------------------------------------------------------------------
    async def _watch(
        self, request: web.Request, rt: ResourceType, namespace: str | None, name: str
    ) -> web.StreamResponse:
        query = request.query
        labels, fields = self._selectors(request, rt)
        timeout = _query_int(query, "timeoutSeconds")
        bookmarks = _query_bool(query, "allowWatchBookmarks")
        initial_end = _query_bool(query, "sendInitialEvents")
        as_table = tables.wants_table(request.headers.get("Accept", ""))
        include = query.get("includeObject", "Metadata")
        flt = WatchFilter(rt.key, namespace, labels, fields, name or None)
        rv = query.get("resourceVersion")
        if initial_end:
            rv = None
        try:
            watcher, initial = self.hub.open(flt, rv)
        except errors.ApiError as err:
            if err.code != 410:
                raise
            resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
            await resp.prepare(request)
            await resp.write((_dumps({"type": "ERROR", "object": err.status()}) + "\n").encode())
            return resp
        resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON, "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        first = [True]

        def encode(event_type: str, obj: dict[str, Any]) -> bytes:
            shown = self.api.present(rt, obj)
            if as_table and event_type in ("ADDED", "MODIFIED", "DELETED"):
                shown = tables.table(
                    rt, [shown], shown["metadata"].get("resourceVersion", ""), include, with_columns=first[0]
                )
                first[0] = False
            return (_dumps({"type": event_type, "object": shown}) + "\n").encode()

        def bookmark(extra: dict[str, Any] | None = None) -> bytes:
            meta: dict[str, Any] = {"resourceVersion": str(self.api.store.resource_version)}
            if extra:
                meta["annotations"] = extra
            obj = {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}
            return (_dumps({"type": "BOOKMARK", "object": obj}) + "\n").encode()

        try:
            await resp.prepare(request)
            for event_type, obj in initial:
                await resp.write(encode(event_type, obj))
            if initial_end:
                await resp.write(bookmark({"k8s.io/initial-events-end": "true"}))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + (timeout if timeout is not None else DEFAULT_WATCH_TIMEOUT)
            next_bookmark = loop.time() + self.bookmark_interval
            while True:
                now = loop.time()
                if now >= deadline:
                    break
                wait = deadline - now
                if bookmarks:
                    wait = min(wait, max(0.0, next_bookmark - now))
                try:
                    change = await asyncio.wait_for(watcher.queue.queue.get(), timeout=wait)
                except TimeoutError:
                    if bookmarks and loop.time() >= next_bookmark:
                        await resp.write(bookmark())
                        next_bookmark = loop.time() + self.bookmark_interval
                    continue
                if change is None:
                    break
                event = watcher.translate(change)
                if event is not None:
                    await resp.write(encode(*event))
            with contextlib.suppress(ConnectionResetError, RuntimeError):
                await resp.write_eof()
        except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            self.hub.close(watcher)
        return resp
