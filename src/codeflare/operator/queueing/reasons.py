"""The pending-reason writer: QuotaReserved=False reasons written apart from, and after, admissions.

A flood of arriving Workloads each needs a pending reason, and a reason changes whenever quota
usage does; writing them inside the scheduling cycle made admissions wait behind thousands of
bookkeeping writes. Here the cycle only marks workloads whose reason may have changed; a
low-priority loop computes each one's reason from the engine *when it writes* (so the newest
state wins and a workload admitted meanwhile is skipped), writes only when the reason or the
stable part of its situation changed (Kueue writes only a changed condition; we do not count a
change of the usage figures in the message as one), at a bounded rate, and pauses while
admissions are being written.
It decides nothing: the engine's reason and :mod:`status`'s wording are used verbatim in the
message, and the reason is Kueue 0.19's code for the engine's kind (:mod:`reason_codes`), written
with ``Admitted=False`` NoReservation as Kueue 0.19 does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import NamedTuple

from codeflare.k8s.conditions import conditions_of, find_condition
from codeflare.k8s.timestamps import format_rfc3339
from codeflare.k8s.types import Obj
from codeflare.kube import errors
from codeflare.kube.ratelimit import Priority, priority
from codeflare.operator.queueing import reason_codes
from codeflare.operator.queueing.feeder import QueueingState
from codeflare.scheduling import PendingInfo

log = logging.getLogger(__name__)

REASON_WRITES_PER_S = 5.0  # the bound on pending-reason writes (they share the client's qps)
REASON_CONCURRENCY = 4  # pending-reason writes in flight at once
CHECKS_PER_YIELD = 256  # unchanged reasons examined before the loop lets others run


class PendingText(NamedTuple):
    """A pending workload's QuotaReserved reason and message, and what decides a rewrite."""

    reason: str
    message: str
    stable: Hashable  # the reason's identity without its fast-changing figures


def stable_identity(reason: str, info: PendingInfo, suffix: str = "") -> Hashable:
    """What a pending reason *is* without the figures that move with usage: the engine's kind,
    queue and, for shortfalls, which resource of which flavor is short (not by how much);
    otherwise the whole message (fixed texts such as "LocalQueue q doesn't exist")."""
    if info.shortfalls:
        short = tuple((s.kind, s.cluster_queue, s.flavor, s.resource) for s in info.shortfalls)
        return (reason, info.kind, info.cluster_queue, short, suffix)
    return (reason, info.kind, info.message, suffix)


Write = Callable[[str, Callable[[Obj], Obj | None]], Awaitable[Obj | None]]
Explain = Callable[[str, PendingInfo], PendingText]


class PendingReasonWriter:
    """Writes pending reasons of marked workloads in the background, newest state first-come."""

    def __init__(
        self,
        state: QueueingState,
        write: Write,
        explain: Explain,
        clock: Callable[[], float],
        rate: float = REASON_WRITES_PER_S,
        concurrency: int = REASON_CONCURRENCY,
    ) -> None:
        self.state = state
        self._write = write
        self._explain = explain
        self._clock = clock
        self._rate = rate
        self._concurrency = concurrency
        self._dirty: set[str] = set()
        self._marked = asyncio.Event()
        self.written = 0  # reason writes done (a counter for tests and benchmarks)

    def mark(self, keys: Iterable[str]) -> None:
        """These workloads' reasons may have changed: look at them again (no I/O, no waiting)."""
        self._dirty.update(keys)
        if self._dirty:
            self._marked.set()

    @property
    def backlog(self) -> int:
        return len(self._dirty)

    def due(self, key: str) -> PendingText | None:
        """The reason to write for ``key`` now, or None: admitted, in flight, gone or unchanged."""
        state = self.state
        if key in state.inflight:
            return None
        cached = state.workload_obj(key)
        if cached is None:
            state.reasons_written.pop(key, None)
            return None
        info = state.engine.pending_reason(key)
        if info is None:
            return None
        text = self._coded(key, cached, info)
        current = find_condition(conditions_of(cached), "QuotaReserved") or {}
        same_reason = current.get("status") == "False" and current.get("reason") == text.reason
        unchanged = current.get("message") == text.message or state.reasons_written.get(key) == text.stable
        return None if same_reason and unchanged else text

    def _coded(self, key: str, cached: Obj, info: PendingInfo) -> PendingText:
        """The explained text with Kueue 0.19's reason code in place of the legacy reason."""
        text = self._explain(key, info)
        namespace = str(cached["metadata"].get("namespace", ""))
        lq = (namespace, str((cached.get("spec") or {}).get("queueName", "")))
        code = reason_codes.quota_reserved_reason(info, lq in self.state.stopped_local_queues)
        return PendingText(code, text.message, (code, text.stable))

    async def run(self) -> None:
        """Write due reasons forever, ``concurrency`` at a time, at most ``rate`` a second."""
        while True:
            await self._marked.wait()
            await self.state.admissions_idle.wait()  # admissions first
            batch = self._take_batch()
            if not self._dirty:
                self._marked.clear()
            if batch is None:
                await asyncio.sleep(0)
                continue
            if batch:
                with priority(Priority.BOOKKEEPING):  # after admissions in the client's rate limit
                    await asyncio.gather(*(self._write_one(k, t) for k, t in batch))
                await asyncio.sleep(len(batch) / self._rate)

    def _take_batch(self) -> list[tuple[str, PendingText]] | None:
        """Up to ``concurrency`` due reasons; None when the check budget ran out first."""
        batch: list[tuple[str, PendingText]] = []
        for _ in range(CHECKS_PER_YIELD):
            if not self._dirty or len(batch) >= self._concurrency:
                return batch
            key = self._dirty.pop()
            text = self.due(key)
            if text is not None:
                batch.append((key, text))
        return batch or None

    async def _write_one(self, key: str, text: PendingText) -> None:
        now = format_rfc3339(self._clock())

        def change(current: Obj) -> Obj | None:
            if (current.get("status") or {}).get("admission"):
                return None  # admitted since: never overwrite an admission with a reason
            return reason_codes.unadmitted_status(current, text.reason, text.message, now)

        try:
            written = await self._write(key, change)
        except errors.KubeError as exc:
            log.debug("pending reason of %s not written (retried on the next change): %s", key, exc)
            return
        if written is not None:
            self.state.reasons_written[key] = text.stable
            self.written += 1
