"""Kueue's job label rules as data: cases from kueue pkg/controller/jobframework/validation.go and
the TestValidateCreate / TestValidateUpdate tables of pkg/controller/jobs/job/job_webhook_test.go
(queue-name, max-exec-time-seconds, priority-class)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.operator.webhooks.jobrules import job_label_problems

QUEUE = "kueue.x-k8s.io/queue-name"
MAX = "kueue.x-k8s.io/max-exec-time-seconds"
PRIORITY = "kueue.x-k8s.io/priority-class"



def obj(suspend: bool = True, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "j", "labels": dict(labels or {})}, "spec": {"suspend": suspend}}


INVALID_QUEUE = f'metadata.labels[{QUEUE}]: Invalid value: "queue name"'
INVALID_MAX = f"metadata.labels[{MAX}]: Invalid value:"
CREATE_CASES = [
    ("simple", {QUEUE: "queue"}, []),
    ("invalid queue-name label", {QUEUE: "queue name"}, [INVALID_QUEUE]),
    ("valid max exec time", {MAX: "10"}, []),
    ("non-numeric max exec time", {MAX: "abc"}, [f'{INVALID_MAX} "abc": must be an integer']),
    ("zero max exec time", {MAX: "0"}, [f"{INVALID_MAX} 0: should be greater than 0"]),
    ("negative max exec time", {MAX: "-10"}, [f"{INVALID_MAX} -10: should be greater than 0"]),
]


@pytest.mark.parametrize(
    ("labels", "expected"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES]
)
def test_create(labels: dict[str, str], expected: list[str]) -> None:
    problems = job_label_problems("CREATE", obj(labels=labels), None)
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start)


UPDATE_CASES = [
    # (name, old suspended, old labels, new suspended, new labels, refused labels)
    ("queue changes while suspended", True, {QUEUE: "a"}, True, {QUEUE: "b"}, []),
    ("queue changes while running", False, {QUEUE: "a"}, False, {QUEUE: "b"}, [QUEUE]),
    ("queue changes as the job starts", True, {QUEUE: "a"}, False, {QUEUE: "b"}, [QUEUE]),
    ("queue added while running", False, {}, False, {QUEUE: "b"}, [QUEUE]),
    ("max exec changes while suspended", True, {MAX: "10"}, True, {MAX: "20"}, []),
    ("max exec changes while running", False, {MAX: "10"}, False, {MAX: "20"}, [MAX]),
    ("max exec changes as the job is suspended", False, {MAX: "10"}, True, {MAX: "20"}, [MAX]),
    ("max exec changed to a bad value while suspended", True, {MAX: "10"}, True, {MAX: "x"}, [MAX]),
    ("priority changes while suspended", True, {PRIORITY: "low"}, True, {PRIORITY: "high"}, []),
    ("priority changes while running", False, {PRIORITY: "low"}, False, {PRIORITY: "high"}, [PRIORITY]),
    ("priority removed while suspended", True, {PRIORITY: "low"}, True, {}, [PRIORITY]),
    ("job starts, labels unchanged", True, {QUEUE: "a", MAX: "10", PRIORITY: "p"}, False,
     {QUEUE: "a", MAX: "10", PRIORITY: "p"}, []),
    # ours: a label that was bad before a webhook ran does not block other updates (finalizers)
    ("a bad label left alone", True, {MAX: "x"}, False, {MAX: "x"}, []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old_suspend", "old_labels", "new_suspend", "new_labels", "refused"),
    [c[1:] for c in UPDATE_CASES],
    ids=[c[0] for c in UPDATE_CASES],
)
def test_update(
    old_suspend: bool,
    old_labels: dict[str, str],
    new_suspend: bool,
    new_labels: dict[str, str],
    refused: list[str],
) -> None:
    problems = job_label_problems("UPDATE", obj(new_suspend, new_labels), obj(old_suspend, old_labels))
    assert [p.split("]")[0].removeprefix("metadata.labels[") for p in problems] == refused


@given(
    labels=st.dictionaries(st.sampled_from([QUEUE, MAX, PRIORITY, "app"]), st.text(max_size=8)),
    suspend=st.booleans(),
)
def test_an_update_that_changes_nothing_is_always_allowed(labels: dict[str, str], suspend: bool) -> None:
    assert job_label_problems("UPDATE", obj(suspend, labels), obj(suspend, labels)) == []
