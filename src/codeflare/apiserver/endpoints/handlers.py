"""The HTTP face of the embedded API server: routing, authentication, authorization, verbs.

:class:`ApiHandlers` turns each request into a call: health and non-resource paths (``/version``,
OpenAPI), discovery, and resource requests, which it authenticates (bearer token), parses into
:class:`~codeflare.apiserver.endpoints.request.RequestAttributes`, authorizes, and serves by verb
through the object API - writes through :class:`~codeflare.apiserver.endpoints.admitted.AdmittedWrites`,
watches through :mod:`~codeflare.apiserver.endpoints.watch_stream`, list and watch options
through :mod:`~codeflare.apiserver.endpoints.list_options`, health checks through
:mod:`~codeflare.apiserver.endpoints.health`. Every failure becomes a Kubernetes Status with the
right code (a full disk: 507); nothing a client sends may produce a 500.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext, UserInfo
from codeflare.apiserver.endpoints import discovery, health, protowire
from codeflare.apiserver.endpoints.admitted import AdmittedWrites
from codeflare.apiserver.endpoints.aggregation import Aggregator
from codeflare.apiserver.endpoints.list_options import list_options
from codeflare.apiserver.endpoints.request import (
    JSON,
    PROTOBUF,
    Authorizer,
    RequestAttributes,
    ResourcePath,
    VirtualCreate,
    allow_all,
    media_type,
    not_found,
    parse_body,
    parse_resource_path,
    query_bool,
    query_int,
    read_body,
    request_context,
    verb_of,
)
from codeflare.apiserver.endpoints.responses import (
    error_response,
    json_response,
    render_list,
    render_object,
    success_status,
    warning_header,
)
from codeflare.apiserver.endpoints.watch_stream import serve_watch
from codeflare.apiserver.registry.listing import check_list_read, parse_resource_version, plan_list
from codeflare.apiserver.registry.objects import ObjectAPI
from codeflare.apiserver.registry.patch import PATCH_CONTENT_TYPES
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.registry.selectors import FieldSelector, LabelSelector
from codeflare.apiserver.registry.watch import WatchHub
from codeflare.apiserver.security.admission import Admission
from codeflare.apiserver.security.authn import ANONYMOUS, TokenAuthenticator
from codeflare.apiserver.storage.reserve import is_disk_full
from codeflare.apiserver.storage.store import StorageFull

__all__ = ["ApiHandlers", "Authorizer", "RequestAttributes", "VirtualCreate"]

log = logging.getLogger(__name__)

MAX_BODY = 3 * 1024 * 1024
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


DEPRECATION = "codeflare.deprecation"  # request key: the Warning of a deprecated version


async def _deprecation_header(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer about a deprecated CRD version carries its Warning (kubectl prints it)."""
    text = request.get(DEPRECATION)
    if text:
        response.headers.add("Warning", warning_header(text))


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
        aggregator: Aggregator | None = None,
    ) -> None:
        self.api = api
        self.admission = admission
        self.writes = AdmittedWrites(api, admission)
        self.virtual = dict(virtual or {})
        self.hub = hub
        self.authn = authn
        self.authorizer = authorizer
        self.server_address = server_address
        self.bookmark_interval = bookmark_interval
        self.openapi = openapi
        self.ready = True
        self.aggregator = aggregator

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._guard])
        app.router.add_route("*", "/{tail:.*}", self.dispatch)
        app.on_response_prepare.append(_deprecation_header)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            return await handler(request)
        except errors.ApiError as err:
            return error_response(err)
        except StorageFull as full:
            return error_response(errors.insufficient_storage(full.directory))
        except web.HTTPRequestEntityTooLarge:
            return json_response(
                errors.ApiError(413, "RequestEntityTooLarge", "the request is too large").status(), 413
            )
        except web.HTTPException:
            raise
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as exc:
            if is_disk_full(exc):  # another database of the state directory (service account tokens)
                return error_response(errors.insufficient_storage(self.api.store.directory))
            log.exception("internal error serving %s %s", request.method, request.path_qs)
            return json_response(
                errors.ApiError(500, "InternalError", "an internal error occurred").status(), 500
            )

    # -- dispatch -------------------------------------------------------------------------------
    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in ("/healthz", "/livez", "/readyz") or path.startswith(("/healthz/", "/livez/", "/readyz/")):
            return health.answer(path, request.query, self.ready, self.api.store)
        user = self.authn.authenticate(request.headers.get("Authorization"))
        if user is None:
            if path not in PUBLIC_PATHS:
                raise errors.unauthorized()
            user = ANONYMOUS
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
                raise not_found()
            accept = request.headers.get("Accept", "")
            if "protobuf" in accept and "json" not in accept and "*/*" not in accept:
                # client-go asks /openapi/v2 in protobuf only; JSON under that request would
                # fail to parse, and 406 is the honest answer (we serve these documents as JSON)
                raise errors.ApiError(406, "NotAcceptable", "only application/json is supported")
            return json_response(doc)
        raise not_found()

    def _discovery(self, segments: list[str]) -> dict[str, Any] | None:
        registry = self.api.registry
        if segments == ["api"]:
            return discovery.core_versions(self.server_address)
        aggregated = self.aggregator.groups() if self.aggregator is not None else None
        if segments == ["apis"]:
            return discovery.group_list(registry, aggregated)
        if len(segments) == 2 and segments[0] == "api":
            return discovery.resource_list(registry, "", segments[1])
        if len(segments) == 2:
            return discovery.group(registry, segments[1], aggregated)
        if len(segments) == 3 and segments[0] == "apis":
            return discovery.resource_list(registry, segments[1], segments[2])
        return None

    async def _resource(
        self, request: web.Request, user: UserInfo, segments: list[str]
    ) -> web.StreamResponse:
        head = 2 if segments[0] == "api" else 3
        if head == 3 and len(segments) >= 3 and self.aggregator is not None:
            svc = self.aggregator.find(segments[1], segments[2])
            if svc is not None:
                return await self._aggregated(request, user, segments, svc)
        if len(segments) <= head:
            if request.method not in ("GET", "HEAD"):
                raise errors.method_not_allowed()
            await self._authorize(user, RequestAttributes("get", request.path, False))
            doc = self._discovery(segments)
            if doc is None:
                raise not_found()
            return json_response(doc)
        where = parse_resource_path(segments)
        rt = self.api.registry.get(where.group, where.version, where.plural)
        if rt is None:
            raise not_found()
        if rt.deprecation_warning:
            request[DEPRECATION] = rt.deprecation_warning
        if where.namespace and not rt.namespaced:
            raise not_found()
        if where.subresource and where.subresource not in rt.subresources():
            raise not_found()
        if rt.namespaced and where.name and not where.namespace:
            raise not_found()
        attrs = _resource_attributes(request, where)
        await self._authorize(user, attrs)
        return await self._serve(request, rt, attrs, request_context(request, user))

    async def _aggregated(
        self, request: web.Request, user: UserInfo, segments: list[str], svc: dict[str, Any]
    ) -> web.StreamResponse:
        """Authorize here, as kube-apiserver does before its aggregator, then proxy to the service."""
        assert self.aggregator is not None
        if len(segments) == 3:
            await self._authorize(user, RequestAttributes("get", request.path, False))
        else:
            await self._authorize(user, _resource_attributes(request, parse_resource_path(segments)))
        return await self.aggregator.proxy(request, user, svc)

    # -- verbs ----------------------------------------------------------------------------------
    async def _serve(
        self, request: web.Request, rt: ResourceType, attrs: RequestAttributes, ctx: RequestContext
    ) -> web.StreamResponse:
        verb, ns, name, sub = attrs.verb, attrs.namespace, attrs.name, attrs.subresource
        virtual = self.virtual.get((rt.key, sub))
        if virtual is not None:
            return await self._virtual(request, rt, attrs, ctx, virtual)
        if verb in ("get", "list", "watch"):
            return await self._read(request, rt, attrs, ctx)
        if verb == "create":
            if name or sub:
                raise errors.method_not_allowed()
            if rt.namespaced and not ns:
                raise not_found()
            body = await read_body(request, rt)  # kubectl's generators (create configmap, ...) send protobuf
            created = await self.writes.create(rt, attrs, body, ctx)
            return render_object(request, rt, created, 201, ctx)
        if verb in ("update", "patch") and not name:
            raise errors.method_not_allowed()  # PUT/PATCH address one object, never a collection
        if verb == "update":
            body = await read_body(request)
            if sub == "scale":
                return json_response(self.api.update_scale(rt, ns, name, body, ctx), 200, ctx.warnings)
            updated = await self.writes.update(rt, attrs, body, ctx, "" if sub == "finalize" else sub)
            return render_object(request, rt, updated, 200, ctx)
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
            await self.writes.delete_collection(rt, ns, ctx, labels, fields, propagation)
            return json_response(success_status())
        raise errors.method_not_allowed()

    async def _virtual(
        self,
        request: web.Request,
        rt: ResourceType,
        attrs: RequestAttributes,
        ctx: RequestContext,
        virtual: VirtualCreate,
    ) -> web.Response:
        """A create-only endpoint that stores nothing (reviews, TokenRequest)."""
        if attrs.verb != "create":
            raise errors.method_not_allowed()
        if media_type(request.headers.get("Content-Type", JSON)) == PROTOBUF:
            kind = (
                "TokenRequest" if attrs.subresource == "token" else rt.kind
            )  # kubectl sends these as protobuf
            body = protowire.decode_request(await request.read(), kind)
        else:
            body = await read_body(request)
        answer = await virtual(rt, attrs, ctx, body)
        return json_response(answer, 201, ctx.warnings)

    async def _read(
        self, request: web.Request, rt: ResourceType, attrs: RequestAttributes, ctx: RequestContext
    ) -> web.StreamResponse:
        ns, name = attrs.namespace, attrs.name
        if attrs.verb == "get":
            await self.hub.ensure_version(parse_resource_version(request.query.get("resourceVersion", "")))
            if attrs.subresource == "scale":
                return json_response(self.api.get_scale(rt, ns, name))
            return render_object(request, rt, self.api.get(rt, ns, name), 200, ctx)
        opts = list_options(request.query, watch=attrs.verb == "watch")
        selectors = self._selectors(request, rt)
        if attrs.verb == "watch":
            return await serve_watch(
                request, self.api, self.hub, rt, ns or None, name, selectors, opts, self.bookmark_interval
            )
        read = plan_list(opts.resource_version, opts.resource_version_match, opts.limit, opts.continue_token)
        await self.hub.ensure_version(read.minimum)
        store = self.api.store
        at = check_list_read(
            read, store.resource_version, store.oldest_resumable, lambda rv: store.changed_since(rt.key, rv)
        )
        page = self.api.list_objects(rt, ns or None, *selectors, max(opts.limit, 0), opts.continue_token)
        if read.exact:
            page.resource_version = at
        return render_list(request, rt, page)

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

    async def _patch(
        self, request: web.Request, rt: ResourceType, ns: str, name: str, sub: str, ctx: RequestContext
    ) -> web.Response:
        patch_type = PATCH_CONTENT_TYPES.get(media_type(request.headers.get("Content-Type", "")))
        if patch_type is None:
            raise errors.unsupported_media_type(", ".join(sorted(PATCH_CONTENT_TYPES)))
        body = await read_body(request)
        force = query_bool(request.query, "force")
        if force and patch_type != "apply":
            raise errors.bad_request("force: Forbidden: may not be specified for non-apply patch")
        if sub == "scale":
            return json_response(
                self.api.update_scale(rt, ns, name, body, ctx, patch_type), 200, ctx.warnings
            )
        obj, created = await self.writes.patch(rt, ns, name, patch_type, body, ctx, sub, force)
        return render_object(request, rt, obj, 201 if created else 200, ctx)

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        options: dict[str, Any] = {}
        raw = await request.read()
        if raw.strip():
            body = parse_body(raw, request.headers.get("Content-Type", JSON))
            if not isinstance(body, dict):
                raise errors.bad_request("DeleteOptions must be an object")
            options.update(body)
        query = request.query
        if query.get("propagationPolicy"):
            options["propagationPolicy"] = query["propagationPolicy"]
        if query.get("orphanDependents") and "propagationPolicy" not in options:
            options["propagationPolicy"] = "Orphan" if query_bool(query, "orphanDependents") else "Background"
        if options.get("orphanDependents") is True and "propagationPolicy" not in options:
            options["propagationPolicy"] = "Orphan"
        query_int(query, "gracePeriodSeconds")
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
        result = await self.writes.delete(rt, ns, name, ctx, options)
        if result.gone and not rt.custom:
            meta = result.obj["metadata"]
            details = {"name": meta["name"], "kind": rt.plural, "uid": meta.get("uid", "")}
            if rt.group:
                details["group"] = rt.group
            return json_response(success_status(details))
        return json_response(result.obj, 200 if result.gone else 202)


def _resource_attributes(request: web.Request, where: ResourcePath) -> RequestAttributes:
    """What RBAC and admission are asked about a resource request."""
    return RequestAttributes(
        verb_of(request, where.name, where.watch),
        request.path,
        True,
        where.group,
        where.version,
        where.plural,
        where.subresource,
        where.namespace,
        where.name,
    )
