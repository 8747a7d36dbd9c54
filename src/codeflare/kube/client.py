"""Dict-in, dict-out Kubernetes calls over lightkube, with one error type and explicit retries.

:class:`AsyncKube` is the implementation (the operator and the agent are asyncio programs);
:class:`Kube` offers the same methods synchronously for the SDK and the CLI by running them on a
private event-loop thread, so it also works inside notebooks that already run a loop. Every
call carries the connection's credentials; API failures raise :mod:`codeflare.kube.errors` types.
Retries follow those types: a temporary error is resent with exponential backoff when
:meth:`~codeflare.kube.errors.KubeError.retryable` allows it for the request (reads, applies,
merge patches, replaces and deletes are idempotent; creates and JSON patches are resent only
when the server cannot have acted), up to :class:`RetryPolicy` ``attempts``; permanent errors
are raised at once; conflicts are retried by :meth:`AsyncKube.update` from a fresh read
(:mod:`codeflare.kube.retry` holds the policy). With a ``rate_limit`` (client-go's QPS/Burst token
bucket, :mod:`codeflare.kube.ratelimit`) every request waits for its token before it is sent:
each send of a request (a resend too), each discovery read, each watch it opens; a list that the
library pages through counts once. An ``observer`` (:data:`RequestObserver`) is told of each of
those sends: its verb, its resource (``workloads/status`` for a status write) and the seconds it
waited for its token, so a program can count where its request budget goes.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import copy
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

from codeflare.k8s.types import Obj
from codeflare.kube import errors
from codeflare.kube.config import Connection
from codeflare.kube.kinds import Kind
from codeflare.kube.ratelimit import TokenBucket
from codeflare.kube.retry import RetryPolicy, send_with_retries, transport_error

log = logging.getLogger(__name__)

T = TypeVar("T")
ALL_NAMESPACES = "*"

RequestObserver = Callable[[str, str, float], None]
"""Called as ``observer(verb, resource, throttled_seconds)`` for each request sent."""


def _to_dict(obj: Any) -> Obj:
    if isinstance(obj, dict):
        return obj
    result: Obj = obj.to_dict()
    return result


def _selector(selector: Mapping[str, str] | None) -> Any:
    """Equality terms (``{"app": "ray"}`` is ``app=ray``), as lightkube builds selectors from them."""
    return None if selector is None else dict(selector)


class AsyncKube:
    """Asynchronous client for one connection; use as an async context manager or call aclose()."""

    def __init__(
        self,
        connection: Connection,
        *,
        field_manager: str = "codeflare",
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        rate_limit: TokenBucket | None = None,
        observer: RequestObserver | None = None,
    ) -> None:
        import httpx2
        from lightkube import AsyncClient

        self.connection = connection
        self.namespace = connection.namespace
        self.field_manager = field_manager
        self.retry = retry or RetryPolicy()
        self.rate_limit = rate_limit  # None: unlimited; may be set later (the operator, once configured)
        self.observer = observer  # may be set later too
        self._client = AsyncClient(
            connection.config,
            namespace=connection.namespace,
            field_manager=field_manager,
            timeout=httpx2.Timeout(timeout),
            trust_env=False,
        )

    def with_rate_limit(self, rate_limit: TokenBucket | None) -> AsyncKube:
        """This client's connection (the same HTTP client: close the original, not the twin) waiting on
        ``rate_limit`` instead: a second budget, as client-go gives each client built from one
        config (the operator's Events use one, apart from its controllers' requests)."""
        twin = copy.copy(self)
        twin.rate_limit = rate_limit
        return twin

    async def __aenter__(self) -> AsyncKube:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.close()

    # -- plumbing -------------------------------------------------------------------------------
    async def _call(
        self,
        kind: Kind,
        name: str,
        namespace: str | None,
        send: Callable[[], Awaitable[T]],
        *,
        verb: str,
        status: bool = False,
        idempotent: bool = True,
    ) -> T:
        """``send()`` with lightkube's and httpx's failures mapped to :mod:`errors`, and retried."""
        resource = f"{kind.plural}/status" if status else kind.plural

        async def once() -> T:
            await self._throttle(verb, resource)
            return await _send_once(kind, name, namespace, send)

        what = f"{kind.kind} {kind.ref(name, namespace)}" if name else kind.kind
        return await send_with_retries(once, self.retry, idempotent=idempotent, what=what)

    async def _throttle(self, verb: str, resource: str) -> None:
        """Wait for this request's token (if rate limited) and tell the observer it is being sent."""
        if self.rate_limit is None:
            waited = 0.0
        else:
            started = time.monotonic()
            await self.rate_limit.acquire()
            waited = time.monotonic() - started
        if self.observer is not None:
            self.observer(verb, resource, waited)

    def _ns(self, kind: Kind, namespace: str | None) -> str | None:
        if not kind.namespaced:
            return None
        return namespace or self.namespace

    # -- reads ----------------------------------------------------------------------------------
    async def _discovery(self, path: str) -> Obj:
        """A discovery document (``/apis``, ``/api/v1``, ``/apis/<group>/<version>``), retried."""
        http: Any = self._client._client._client  # lightkube's httpx client, carrying our credentials

        async def once() -> Obj:
            await self._throttle("get", "discovery")
            try:
                response = await http.get(path)
            except Exception as exc:
                raise transport_error(exc) from exc
            if response.status_code >= 400:
                raise errors.from_response(response.status_code, response.text)
            body: Obj = response.json()
            return body

        return await send_with_retries(once, self.retry, idempotent=True, what=f"GET {path}")

    async def api_groups(self) -> dict[str, list[str]]:
        """Discovery (``GET /apis``): each served API group with its served versions."""
        return {
            str(g.get("name", "")): [str(v.get("version", "")) for v in g.get("versions") or []]
            for g in (await self._discovery("/apis")).get("groups") or []
        }

    async def get_raw(self, path: str) -> Obj:
        """``GET path`` (with its query string) as JSON, for what no Kind describes, e.g. an
        aggregated API's answer (``kubectl get --raw``); retried like discovery."""
        return await self._discovery(path)

    async def api_resources(self, api_version: str) -> list[Obj]:
        """Discovery of one group-version: its APIResourceList ``resources`` (subresources included)."""
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        return list((await self._discovery(path)).get("resources") or [])

    async def get(self, kind: Kind, name: str, namespace: str | None = None) -> Obj:
        ns = self._ns(kind, namespace)
        return _to_dict(
            await self._call(
                kind, name, ns, lambda: self._client.get(kind.lightkube(), name, namespace=ns), verb="get"
            )
        )

    async def find(self, kind: Kind, name: str, namespace: str | None = None) -> Obj | None:
        """Like :meth:`get`, but None when the object does not exist."""
        try:
            return await self.get(kind, name, namespace)
        except errors.NotFound:
            return None

    async def list(
        self,
        kind: Kind,
        namespace: str | None = None,
        *,
        labels: Mapping[str, str] | None = None,
        fields: Mapping[str, str] | None = None,
        all_namespaces: bool = False,
    ) -> list[Obj]:
        ns = ALL_NAMESPACES if all_namespaces and kind.namespaced else self._ns(kind, namespace)

        async def collect() -> list[Obj]:
            return [
                _to_dict(o)
                async for o in self._client.list(
                    kind.lightkube(), namespace=ns, labels=_selector(labels), fields=_selector(fields)
                )
            ]

        return await self._call(kind, "", None, collect, verb="list")

    async def list_with_version(
        self, kind: Kind, namespace: str | None = None
    ) -> tuple[builtins.list[Obj], str]:
        """All objects (every namespace when None) and the list's resourceVersion, for informers."""
        ns = ALL_NAMESPACES if namespace is None and kind.namespaced else namespace

        async def collect() -> tuple[builtins.list[Obj], str]:
            iterator = self._client.list(kind.lightkube(), namespace=ns)
            items = [_to_dict(o) async for o in iterator]
            return items, str(getattr(iterator, "resourceVersion", "") or "")

        return await self._call(kind, "", None, collect, verb="list")

    async def watch(
        self,
        kind: Kind,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> AsyncIterator[tuple[str, Obj]]:
        """Events (type, object) from ``resource_version`` on; ends when the server closes the stream."""
        from lightkube import ApiError
        from lightkube.types import on_error_raise

        ns = ALL_NAMESPACES if namespace is None and kind.namespaced else namespace
        await self._throttle("watch", kind.plural)
        stream = self._client.watch(
            kind.lightkube(),
            namespace=ns,
            resource_version=resource_version,
            labels=_selector(labels),
            on_error=on_error_raise,
        )
        try:
            async for event_type, obj in stream:
                yield event_type, _to_dict(obj)
        except ApiError as exc:
            raise _api_error(exc, kind=kind.kind) from exc

    # -- writes ---------------------------------------------------------------------------------
    async def create(self, kind: Kind, obj: Obj, namespace: str | None = None) -> Obj:
        ns = self._ns(kind, namespace or (obj.get("metadata") or {}).get("namespace"))
        name = (obj.get("metadata") or {}).get("name", "")
        res = _resource(kind, _with_namespace(obj, ns))
        client: Any = self._client
        # not idempotent: resent only when the server cannot have created it
        return _to_dict(
            await self._call(kind, name, ns, lambda: client.create(res), verb="create", idempotent=False)
        )

    async def replace(self, kind: Kind, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        ns = self._ns(kind, meta.get("namespace"))
        res = _resource(kind, _with_namespace(obj, ns))
        client: Any = self._client
        return _to_dict(
            await self._call(kind, meta.get("name", ""), ns, lambda: client.replace(res), verb="update")
        )

    async def replace_status(self, kind: Kind, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        ns = self._ns(kind, meta.get("namespace"))
        client: Any = self._client
        body = _status_of(kind, obj)

        def call() -> Awaitable[Any]:
            return client.replace(body, meta.get("name", ""), namespace=ns)

        return _to_dict(await self._call(kind, meta.get("name", ""), ns, call, verb="update", status=True))

    async def patch(
        self,
        kind: Kind,
        name: str,
        body: Any,
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        status: bool = False,
        force: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        """Patch with ``merge``, ``json`` or ``apply`` (server-side apply) semantics."""
        from lightkube.types import PatchType

        ptype = PatchType[patch_type.upper()]  # MERGE, JSON, APPLY, STRATEGIC
        ns = self._ns(kind, namespace)
        res = kind.lightkube().Status if status else kind.lightkube()
        manager = field_manager or self.field_manager

        def call() -> Awaitable[Any]:
            return self._client.patch(
                res,
                name,
                body,
                namespace=ns,
                patch_type=ptype,
                field_manager=manager if patch_type == "apply" else field_manager,
                force=force,
            )

        # a JSON patch may add to a list: resent only when the server cannot have applied it
        return _to_dict(
            await self._call(
                kind, name, ns, call, verb="patch", status=status, idempotent=patch_type != "json"
            )
        )

    async def apply(
        self,
        kind: Kind,
        obj: Obj,
        *,
        force: bool = True,
        status: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        """Server-side apply of ``obj`` (idempotent); ``force`` takes over conflicting fields."""
        body = _typed(kind, obj)
        meta = body.get("metadata") or {}
        return await self.patch(
            kind,
            meta["name"],
            body,
            meta.get("namespace"),
            patch_type="apply",
            status=status,
            force=force,
            field_manager=field_manager,
        )

    async def delete(
        self,
        kind: Kind,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str = "Background",
        missing_ok: bool = True,
    ) -> None:
        from lightkube.types import CascadeType

        ns = self._ns(kind, namespace)
        cascade = CascadeType(propagation)  # Background, Foreground or Orphan
        try:
            await self._call(
                kind,
                name,
                ns,
                lambda: self._client.delete(kind.lightkube(), name, namespace=ns, cascade=cascade),
                verb="delete",
            )
        except errors.NotFound:
            if not missing_ok:
                raise

    async def update(
        self,
        kind: Kind,
        name: str,
        namespace: str | None,
        change: Callable[[Obj], Obj | None],
        *,
        status: bool = False,
        attempts: int = 8,
    ) -> Obj | None:
        """Read-modify-write with retries on 409: ``change`` edits a fresh copy (return None to skip)."""
        for attempt in range(attempts):
            current = await self.find(kind, name, namespace)
            if current is None:
                return None
            edited = change(copy.deepcopy(current))
            if edited is None:
                return current
            try:
                if status:
                    return await self.replace_status(kind, edited)
                return await self.replace(kind, edited)
            except errors.Conflict:
                log.debug("conflict updating %s, retry %d", kind.ref(name, namespace), attempt + 1)
                await asyncio.sleep(0.01 * (attempt + 1))
        raise errors.Conflict(
            f"gave up after {attempts} conflicting updates",
            kind=kind.kind,
            name=name,
            namespace=namespace or "",
        )


async def _send_once(kind: Kind, name: str, namespace: str | None, send: Callable[[], Awaitable[T]]) -> T:
    """``send()`` once, with lightkube's and httpx's failures mapped to :mod:`errors`."""
    import httpx2
    from lightkube import ApiError

    where: dict[str, str] = {"kind": kind.kind, "name": name, "namespace": namespace or ""}
    try:
        return await send()
    except ApiError as exc:
        raise _api_error(exc, **where) from exc
    except httpx2.HTTPStatusError as exc:  # an answer lightkube did not read as a Status
        raise errors.from_response(exc.response.status_code, exc.response.text, **where) from exc
    except (OSError, TimeoutError, httpx2.HTTPError) as exc:
        raise transport_error(exc, **where) from exc


def _resource(kind: Kind, obj: Obj) -> Any:
    return kind.lightkube().from_dict(_typed(kind, obj))


def _api_error(exc: Any, **where: str) -> errors.KubeError:
    """Our error for lightkube's ApiError: its Status, the HTTP code when the Status has none."""
    status = exc.status.to_dict() if getattr(exc, "status", None) is not None else {}
    if not status.get("code"):
        response = getattr(exc, "response", None)
        status["code"] = response.status_code if response is not None else 500  # a watch's ERROR event
    return errors.from_status(status, **where)


def _with_namespace(obj: Obj, namespace: str | None) -> Obj:
    if namespace is None:
        return obj
    out = dict(obj)
    out["metadata"] = dict(obj.get("metadata") or {}, namespace=namespace)
    return out


def _typed(kind: Kind, obj: Obj) -> Obj:
    """``obj`` carrying ``kind``'s apiVersion and kind unless it names its own: a shallow copy
    (only the top level is set here, and lightkube only serializes the body), so the caller's
    nested values are shared, not copied (a deep copy was a large part of a write's client cost)."""
    data = dict(obj)
    data.setdefault("apiVersion", kind.api_version)
    data.setdefault("kind", kind.kind)
    return data


def _status_of(kind: Kind, obj: Obj) -> Any:
    data = _typed(kind, obj)
    return kind.lightkube().Status.from_dict(data) if hasattr(kind.lightkube(), "Status") else data


P = ParamSpec("P")


def _blocking(
    method: Callable[Concatenate[AsyncKube, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[Kube, P], T]:
    """The :class:`Kube` method running ``method`` of its :class:`AsyncKube` on the private loop."""

    @functools.wraps(method)
    def call(self: Kube, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(method(self._async, *args, **kwargs))

    return call


class Kube:
    """Synchronous facade over :class:`AsyncKube`, for the SDK, the CLI and notebooks.

    Calls run on a private event loop in a daemon thread, so they work whether or not the
    caller's thread already runs a loop, and from any number of threads. Every request method of
    :class:`AsyncKube` but :meth:`~AsyncKube.watch` (a stream) is here with the same parameters,
    results and errors. One instance per connection; :meth:`close` when done.
    """

    def __init__(
        self,
        connection: Connection,
        *,
        field_manager: str = "codeflare",
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        rate_limit: TokenBucket | None = None,
    ) -> None:
        self.connection = connection
        self.namespace = connection.namespace
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="codeflare-kube", daemon=True)
        self._thread.start()

        async def make() -> AsyncKube:  # built on the loop that will use it
            return AsyncKube(
                connection, field_manager=field_manager, timeout=timeout, retry=retry, rate_limit=rate_limit
            )

        self._async = self._run(make())

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        with contextlib.suppress(Exception):
            self._run(self._async.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    api_groups = _blocking(AsyncKube.api_groups)
    api_resources = _blocking(AsyncKube.api_resources)
    get_raw = _blocking(AsyncKube.get_raw)
    get = _blocking(AsyncKube.get)
    find = _blocking(AsyncKube.find)
    list = _blocking(AsyncKube.list)
    list_with_version = _blocking(AsyncKube.list_with_version)
    create = _blocking(AsyncKube.create)
    replace = _blocking(AsyncKube.replace)
    replace_status = _blocking(AsyncKube.replace_status)
    patch = _blocking(AsyncKube.patch)
    apply = _blocking(AsyncKube.apply)
    delete = _blocking(AsyncKube.delete)
    update = _blocking(AsyncKube.update)
