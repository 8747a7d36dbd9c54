"""The queueing labels every job kind must keep valid: Kueue's job webhook rules.

Kueue validates, for each job integration (RayJob, RayCluster, AppWrapper, ...), on create: the
``kueue.x-k8s.io/queue-name`` label is a DNS-1123 subdomain and
``kueue.x-k8s.io/max-exec-time-seconds`` is a positive integer; on update: the queue name cannot
change while the job runs, the maximum execution time cannot change unless the job was and stays
suspended, and the priority class cannot change while the job runs nor be removed. Facts from
kueue pkg/controller/jobframework/validation.go (ValidateJobOnCreate, ValidateJobOnUpdate).
On update the create rules apply to the labels the write changes. The operator's job sync still
reports a bad maximum as an Event when no webhook ran (webhooks off); it decides nothing here.
"""

from __future__ import annotations

import json

from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL
from codeflare.k8s.names import is_dns1123_subdomain
from codeflare.k8s.types import Obj
from codeflare.operator.queueing.maxexec import MaxExecLabelError, parse_label

__all__ = ["job_label_problems"]


def _labels(obj: Obj | None) -> dict[str, str]:
    return dict(((obj or {}).get("metadata") or {}).get("labels") or {})


def _suspended(obj: Obj) -> bool:
    return bool((obj.get("spec") or {}).get("suspend"))


def _invalid(label: str, value: object, rule: str) -> str:
    return f"metadata.labels[{label}]: Invalid value: {json.dumps(value)}: {rule}"


def _immutable(label: str, new: dict[str, str], old: dict[str, str]) -> list[str]:
    if new.get(label, "") == old.get(label, ""):
        return []
    return [_invalid(label, new.get(label, ""), "field is immutable")]


def _create_problems(labels: dict[str, str]) -> list[str]:
    problems: list[str] = []
    queue = labels.get(QUEUE_NAME_LABEL)
    if queue is not None:
        errs = is_dns1123_subdomain(queue)
        if errs:
            problems.append(_invalid(QUEUE_NAME_LABEL, queue, ", ".join(errs)))
    seconds = labels.get(MAX_EXEC_TIME_LABEL)
    if seconds is not None:
        try:
            parse_label(seconds)
        except MaxExecLabelError as exc:
            problems.append(_invalid(MAX_EXEC_TIME_LABEL, exc.value, exc.rule))
    return problems


def job_label_problems(operation: str, obj: Obj, old: Obj | None) -> list[str]:
    """Every broken queueing-label rule of a job write, each naming the label and the rule."""
    labels = _labels(obj)
    if operation == "CREATE":
        return _create_problems(labels)
    if operation != "UPDATE" or old is None:
        return []
    previous = _labels(old)
    # Kueue checks the whole new object again; we check only the labels this write changes, so
    # that an object created with a bad label while no webhook ran can still be updated (its
    # finalizers removed, its suspension changed) by the operator
    changed = {k: v for k, v in labels.items() if previous.get(k) != v}
    problems = _create_problems(changed)
    running = not _suspended(obj)
    if running:
        problems += _immutable(QUEUE_NAME_LABEL, labels, previous)
    if running or not _suspended(old):
        problems += _immutable(MAX_EXEC_TIME_LABEL, labels, previous)
    if running or not labels.get(PRIORITY_CLASS_LABEL):
        problems += _immutable(PRIORITY_CLASS_LABEL, labels, previous)
    return problems
