"""A RayJob's output, streamed from its Ray cluster's Jobs API (or from the kept copy once it ended).

While the job's cluster runs, the Ray dashboard's log tail (a websocket,
``/api/jobs/<id>/logs/tail``) is followed and each chunk handed on as it arrives; where the tail
is not offered, the whole log is read once. A cluster with a Ray token (local mode's Secret
``<cluster>-ray-token``, :mod:`codeflare.api.ray_auth`) is called with it, read with the user's
credentials: who may not read the Secret does not get the logs. After the cluster is gone, the ConfigMap
``<job>-logs`` the node agent keeps is read with the user's credentials. The server side does
the reading: the browser only ever receives text. Nothing here parses or filters the output.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from codeflare.api.ray_auth import bearer_headers, token_from_secret, token_secret_name
from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube

log = logging.getLogger(__name__)


async def job_output(
    kube: AsyncKube, namespace: str, name: str, dashboard: str, job_id: str, cluster: str = ""
) -> AsyncIterator[str]:
    """Chunks of the job's output until it ends or the caller stops reading."""
    if dashboard and job_id:
        base = dashboard if "://" in dashboard else f"http://{dashboard}"
        headers = await _ray_headers(kube, namespace, cluster)
        streamed = False
        async for chunk in _tail(base.rstrip("/"), job_id, headers):
            streamed = True
            yield chunk
        if streamed:
            return
    try:
        kept = await kube.find(kinds.CONFIGMAP, f"{name}-logs", namespace)
    except errors.KubeError as exc:
        yield f"[logs not readable: {exc.message}]\n"
        return
    if kept is not None:
        yield str((kept.get("data") or {}).get("logs", ""))
    elif not job_id:
        yield "[the job has not started yet: no output]\n"
    else:
        yield f"[no output: the Ray dashboard of the job's cluster did not answer at {dashboard or '-'}]\n"


async def _ray_headers(kube: AsyncKube, namespace: str, cluster: str) -> dict[str, str]:
    if not cluster:
        return {}
    try:
        secret = await kube.find(kinds.SECRET, token_secret_name(cluster), namespace)
    except errors.KubeError as exc:
        log.info("Ray token of cluster %s/%s not readable: %s", namespace, cluster, exc)
        return {}
    return bearer_headers(token_from_secret(secret)) if secret is not None else {}


async def _tail(base: str, job_id: str, headers: dict[str, str]) -> AsyncIterator[str]:
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=None, sock_connect=5)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers, trust_env=False) as session:
        try:
            async with session.ws_connect(f"{base}/api/jobs/{job_id}/logs/tail") as ws:
                async for msg in ws:
                    if msg.type == aiohttp.WSMsgType.TEXT and msg.data:
                        yield str(msg.data)
                    elif msg.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        break
                return
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.info("log tail of job %s at %s unavailable (%s); reading the log once", job_id, base, exc)
        try:
            async with session.get(f"{base}/api/jobs/{job_id}/logs") as resp:
                if resp.status == 200:
                    yield str((await resp.json()).get("logs", ""))
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
            log.info("logs of job %s at %s unreadable: %s", job_id, base, exc)
