"""Following a RayJob's output while it runs: Ray's Jobs API tail, then the kept logs.

:func:`follow` waits until the job has a Ray job id and a cluster whose dashboard is known, tails
``/api/jobs/<id>/logs/tail`` through Ray's ``JobSubmissionClient.tail_job_logs`` (the client the
SDK builds with the cluster's credentials, :func:`codeflare.sdk.raylink.job_client_for`) and
yields each chunk as it arrives. When the tail ends (the job ended) or breaks (its cluster went
away), it reads the logs kept in the ``<name>-logs`` ConfigMap and yields only what was not shown
yet (:func:`unseen`). A job that already ended yields its kept logs at once. The async tail runs in
a thread of its own, so a caller inside a running event loop (a notebook) can iterate it too. It
does not print; the CLI and notebooks decide where the chunks go.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from codeflare.errors import WaitTimeout
from codeflare.kube import kinds
from codeflare.sdk.cluster import dashboard_uri
from codeflare.sdk.raylink import job_client_for

if TYPE_CHECKING:
    from codeflare.sdk.job import RayJob

log = logging.getLogger(__name__)

_DONE = object()  # end of the tail, put on the queue by the pump thread
KEPT_WAIT_S = 30.0  # how long a finished job's kept logs may take to appear


def unseen(shown: str, kept: str) -> str:
    """The part of ``kept`` not already in ``shown``.

    ``kept`` is the tail of the job's whole output (the agent keeps a bounded tail), ``shown`` a
    prefix of it: the answer is what follows the longest suffix of ``shown`` that is a prefix of
    ``kept`` (prefix function over ``kept``, then ``shown``; linear time). Logs carry no
    offsets, so when the text repeats across the seam the longest overlap is taken (a repeated
    line may be dropped, never one shown twice).
    """
    if not shown:
        return kept
    window = shown[-len(kept):] if kept else ""
    fail = [0] * len(kept)
    k = 0
    for i in range(1, len(kept)):
        while k and kept[i] != kept[k]:
            k = fail[k - 1]
        if kept[i] == kept[k]:
            k += 1
        fail[i] = k
    k = 0
    for char in window:
        while k and (k == len(kept) or char != kept[k]):
            k = fail[k - 1]
        if k < len(kept) and char == kept[k]:
            k += 1
    return kept[k:]


def _kept(job: RayJob) -> str | None:
    found = job.client.kube.find(kinds.CONFIGMAP, f"{job.name}-logs", job.namespace)
    return None if found is None else str((found.get("data") or {}).get("logs", ""))


def _wait_kept(job: RayJob, timeout: float, poll: float) -> str:
    deadline = time.monotonic() + timeout
    while (text := _kept(job)) is None and time.monotonic() < deadline:
        time.sleep(poll)
    return text or ""


def _tail_target(job: RayJob, poll: float, timeout: float | None) -> tuple[Any, str] | None:
    """The Jobs client and Ray job id to tail once the job runs; None when it ended first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if _kept(job) is not None:
            return None
        status = job.status()
        if status.finished:
            return None
        # jobId is recorded before the submission (as KubeRay does); jobStatus says it happened
        if status.job_id and status.job and status.cluster:
            rc = job.client.kube.find(kinds.RAYCLUSTER, status.cluster, job.namespace)
            url = dashboard_uri(job.client, rc) if rc else None
            if url:
                return job_client_for(job.client, url, rc), status.job_id
        if deadline is not None and time.monotonic() > deadline:
            raise WaitTimeout(f"RayJob {job.namespace}/{job.name} not running after {timeout}s "
                              f"({status.deployment or 'queued'})")
        time.sleep(poll)


def _chunks(jobs_client: Any, job_id: str) -> Iterator[str]:
    """``tail_job_logs`` driven from a thread of its own; a broken tail ends the iteration."""
    chunks: queue.Queue[object] = queue.Queue()
    loop = asyncio.new_event_loop()

    async def pump() -> None:
        try:
            async for chunk in jobs_client.tail_job_logs(job_id):
                chunks.put(chunk)
        except asyncio.CancelledError:  # the caller stopped iterating
            pass
        except Exception as exc:  # the cluster going away ends the tail; the kept logs follow
            log.info("log tail of Ray job %s ended: %s", job_id, exc)
        finally:
            chunks.put(_DONE)

    task = loop.create_task(pump())
    thread = threading.Thread(target=loop.run_until_complete, args=(task,), daemon=True,
                              name=f"tail-{job_id}")
    thread.start()
    try:
        while (item := chunks.get()) is not _DONE:
            yield str(item)
    finally:
        if thread.is_alive():
            loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=10)
        if not thread.is_alive():
            loop.close()


def follow(job: RayJob, poll: float = 0.5, timeout: float | None = None) -> Iterator[str]:
    """The job's output as chunks while it runs, ending when it ends (see the module docstring).

    ``timeout`` bounds the wait for the job to start running (queued, cluster starting):
    :class:`~codeflare.errors.WaitTimeout` after it; the tail itself lasts as long as the job.
    """
    target = _tail_target(job, poll, timeout)
    if target is None:
        kept = _wait_kept(job, KEPT_WAIT_S, poll)
        if kept:
            yield kept
        return
    shown: list[str] = []
    for chunk in _chunks(*target):
        shown.append(chunk)
        yield chunk
    rest = unseen("".join(shown), _wait_kept(job, KEPT_WAIT_S, poll))
    if rest:
        yield rest
