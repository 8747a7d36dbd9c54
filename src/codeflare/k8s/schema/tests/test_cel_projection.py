"""Binding only what a rule reads changes no verdict: the cut evaluation equals the whole one.

The evaluator hands each node's rules only the part of ``self``/``oldSelf`` they can read
(:func:`~codeflare.k8s.schema.celscan.reads`, :func:`~codeflare.k8s.schema.celvalues.project`);
``evaluate(..., whole=True)`` binds the whole values, as before the cut. Both must give the same
errors on every existing corpus (Kubernetes' ``TestValidationExpressions`` cases, our Kueue
CRDs) and on generated objects. The one place they may differ is the cost guard: a value that
is not bound is not priced, so a rule that only tests ``has(self.x)`` on a huge ``x`` now runs
(as in Kubernetes, whose cost is what a rule actually reads); the generated objects here stay
far below the limits, so the comparison is exact.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeflare.k8s.schema import CompiledSchema
from codeflare.k8s.schema.celscan import EACH, FULL, PRESENT, SIZE, merge, reads
from codeflare.k8s.schema.celvalues import project
from codeflare.k8s.schema.rules import RuleNode, compile_tree, evaluate
from codeflare.k8s.schema.tests.cel_cases import CASES, Case
from codeflare.k8s.schema.tests.samples import messages

CRDS = Path(__file__).resolve().parents[3] / "api" / "crds"


def _both(tree: RuleNode, obj: Any, old: Any = None) -> tuple[list[str], list[str]]:
    return messages(evaluate(tree, obj, old)), messages(evaluate(tree, obj, old, whole=True))


# --- what an expression reads ------------------------------------------------------------------

READS = [
    ("self.a.b == 1", {"self": {"a": {"b": FULL}}}),
    ("has(self.a) ? self.a.b <= self.c : true", {"self": {"a": {"b": FULL}, "c": FULL}}),
    (
        "size(self.spec.podSets) == size(self.status.x)",
        {"self": {"spec": {"podSets": SIZE}, "status": {"x": SIZE}}},
    ),
    (
        "has(self.s) && has(self.s.c) && self.s.c.exists(c, c.t == 'Q')",
        {"self": {"s": {"c": {EACH: {"t": FULL}}}}},  # a quantifier reads what its body reads of c
    ),
    ("self.x.all(i, i > 0)", {"self": {"x": {EACH: FULL}}}),
    ("self.l.map(x, x.a).all(y, y)", {"self": {"l": FULL}}),  # map and filter read the whole list
    ("self.m.all(k, self.m[k] > 0)", {"self": {"m": FULL}}),
    ("self.l.all(x, true) && size(self.l) > 1", {"self": {"l": {EACH: PRESENT}}}),
    ("self.g.all(g, g.f.all(f, !has(f.b)))", {"self": {"g": {EACH: {"f": {EACH: {"b": PRESENT}}}}}}),
    ("self.l.all(x, has(x.a)) && self.l.b == 1", {"self": {"l": FULL}}),  # items and fields
    ("self == oldSelf", {"self": FULL, "oldSelf": FULL}),
    ("self.a.size() > 0", {"self": {"a": FULL}}),  # only the function form counts as a size read
    ("x.size(self.a) > 0", {"self": {"a": FULL}}),
    ("'k' in self.m", {"self": {"m": FULL}}),
    ("oldSelf.value().x == 1", {"oldSelf": FULL}),  # optionalOldSelf: any method reads it whole
    ("self.a[0] == 1", {"self": {"a": FULL}}),
    ("size(self.a) > 0 && self.a.b == 1", {"self": {"a": FULL}}),  # a map's size needs every key
    ("has(self.a.b) || self.c.d", {"self": {"a": {"b": PRESENT}, "c": {"d": FULL}}}),
    ("'self.a' == self.b", {"self": {"b": FULL}}),  # inside a string literal: not a read
]


@pytest.mark.parametrize(("source", "expected"), READS, ids=[s for s, _ in READS])
def test_reads_names_what_the_expression_can_reach(source: str, expected: dict[str, Any]) -> None:
    assert reads(source) == expected


@pytest.mark.parametrize(
    ("a", "b", "merged"),
    [
        (PRESENT, SIZE, SIZE),
        (PRESENT, {"x": FULL}, {"x": FULL}),
        (SIZE, SIZE, SIZE),
        (SIZE, {"x": FULL}, FULL),
        ({"x": PRESENT}, {"x": SIZE, "y": FULL}, {"x": SIZE, "y": FULL}),
        ({"x": FULL}, FULL, FULL),
        ({EACH: {"a": FULL}}, SIZE, {EACH: {"a": FULL}}),  # cut items keep the length
        ({EACH: {"a": FULL}}, {EACH: {"b": PRESENT}}, {EACH: {"a": FULL, "b": PRESENT}}),
        ({EACH: FULL}, {"b": FULL}, FULL),
    ],
)
def test_two_reads_merge_to_what_both_need(a: Any, b: Any, merged: Any) -> None:
    assert merge(a, b) == merged
    assert merge(b, a) == merged


def test_project_keeps_only_what_is_read() -> None:
    value = {"a": {"b": 1, "c": [1, 2]}, "d": [{"x": 1}, {"x": 2}], "e": {"f": {"g": 1}}, "z": "unread"}
    read = {"a": {"b": FULL}, "d": SIZE, "e": PRESENT}
    assert project(value, read) == {"a": {"b": 1}, "d": [0, 0], "e": {}}
    assert project({"a-b": 1, "c": 2}, {"a__dash__b": FULL}) == {"a-b": 1}  # escaped CEL name
    assert project({"m": {"k": None, "j": 1}}, {"m": SIZE}) == {"m": {"k": None, "j": 0}}
    items = {"l": [{"a": 1, "b": 2}, {"b": 3}], "m": {"k": {"a": 1}}}
    assert project(items, {"l": {EACH: {"a": FULL}}, "m": {EACH: PRESENT}}) == {
        "l": [{"a": 1}, {}],
        "m": {"k": {"a": 1}},
    }


# --- the existing corpora ----------------------------------------------------------------------


def _case_rules(case: Case) -> list[str]:
    return [*case.valid, *case.errors, *(["oldSelf != oldSelf"] if case.skipped else [])]


CASE_RULES = [(case, rule) for case in CASES for rule in _case_rules(case)]


@pytest.mark.parametrize(("case", "rule"), CASE_RULES, ids=[f"{c.name}: {r}" for c, r in CASE_RULES])
def test_kubernetes_cases_give_the_same_verdict_cut_or_whole(case: Case, rule: str) -> None:
    schema: dict[str, Any] = {**case.schema, "x-kubernetes-validations": [{"rule": rule}]}
    tree = compile_tree(schema, resource_root=case.is_root)
    assert tree is not None
    cut, whole = _both(tree, case.obj, case.old)
    assert cut == whole


def _storage_schema(filename: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / filename).read_text())
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


WORKLOAD = CompiledSchema(_storage_schema("kueue.x-k8s.io_workloads.yaml"))
CLUSTER_QUEUE = CompiledSchema(_storage_schema("kueue.x-k8s.io_clusterqueues.yaml"))


# --- generated Kueue objects -------------------------------------------------------------------

_NAMES = st.sampled_from(["a", "b", "main"])
_CONDITION = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["QuotaReserved", "Admitted", "Evicted"]),
        "status": st.sampled_from(["True", "False"]),
    }
)


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(_NAMES, min_size=1, max_size=3, unique=True))
    pod_sets = []
    for name in names:
        pod_set: dict[str, Any] = {"name": name, "count": draw(st.integers(0, 4)), "template": {"spec": {}}}
        if draw(st.booleans()):
            pod_set["minCount"] = draw(st.integers(0, 5))
        pod_sets.append(pod_set)
    spec: dict[str, Any] = {"podSets": pod_sets}
    for key, values in (
        ("queueName", st.sampled_from(["q1", "q2"])),
        ("priorityClassName", st.sampled_from(["low", "high"])),
        ("priority", st.integers(0, 100)),
        (
            "priorityClassSource",
            st.sampled_from(["kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass"]),
        ),
    ):
        if draw(st.booleans()):
            spec[key] = draw(values)
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }
    if draw(st.booleans()):
        status: dict[str, Any] = {}
        if draw(st.booleans()):
            status["conditions"] = draw(st.lists(_CONDITION, max_size=3, unique_by=lambda c: c["type"]))
        if draw(st.booleans()):
            assigned = draw(st.lists(_NAMES, max_size=3, unique=True))
            status["admission"] = {
                "clusterQueue": "cq",
                "podSetAssignments": [{"name": n, "flavors": {"cpu": "f"}} for n in assigned],
            }
        obj["status"] = status
    return obj


_QUOTA = st.sampled_from(["1", "10", "2Gi"])


@st.composite
def cluster_queues(draw: st.DrawFn) -> dict[str, Any]:
    def resource(name: str) -> dict[str, Any]:
        out = {"name": name, "nominalQuota": draw(_QUOTA)}
        if draw(st.booleans()):
            out["borrowingLimit"] = draw(_QUOTA)
        return out

    covered = draw(st.lists(st.sampled_from(["cpu", "memory"]), min_size=1, max_size=2, unique=True))
    flavors = [
        {
            "name": f"f{i}",
            "resources": [
                resource(r)
                for r in draw(st.lists(st.sampled_from(covered), min_size=1, max_size=2, unique=True))
            ],
        }
        for i in range(draw(st.integers(1, 2)))
    ]
    spec: dict[str, Any] = {"resourceGroups": [{"coveredResources": covered, "flavors": flavors}]}
    if draw(st.booleans()):
        spec["cohort"] = "c"
    if draw(st.booleans()):
        preemption: dict[str, Any] = {"reclaimWithinCohort": draw(st.sampled_from(["Never", "Any"]))}
        if draw(st.booleans()):
            preemption["borrowWithinCohort"] = {"policy": draw(st.sampled_from(["Never", "LowerPriority"]))}
        spec["preemption"] = preemption
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": spec,
    }


def _cut_equals_whole(schema: CompiledSchema, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    tree = schema.rules()
    assert tree is not None
    new = copy.deepcopy(obj)
    schema.default(new)
    cut, whole = _both(tree, new, old)
    assert cut == whole


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.one_of(st.none(), workloads()))
def test_workload_rules_give_the_same_verdict_cut_or_whole(
    obj: dict[str, Any], old: dict[str, Any] | None
) -> None:
    if old is not None:
        WORKLOAD.default(old)
    _cut_equals_whole(WORKLOAD, obj, old)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_queues(), st.one_of(st.none(), cluster_queues()))
def test_cluster_queue_rules_give_the_same_verdict_cut_or_whole(
    obj: dict[str, Any], old: dict[str, Any] | None
) -> None:
    _cut_equals_whole(CLUSTER_QUEUE, obj, old)


def test_the_generated_workloads_reach_both_verdicts() -> None:
    """The comparison above is not vacuous: the Workload rules do refuse some generated objects."""
    tree = WORKLOAD.rules()
    assert tree is not None
    admitted = {
        "conditions": [{"type": "QuotaReserved", "status": "True"}],
        "admission": {"clusterQueue": "cq", "podSetAssignments": []},
    }
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {"podSets": [{"name": "a", "count": 1, "template": {}}]},
        "status": admitted,
    }
    cut, whole = _both(tree, obj)
    refused = '<nil>: Invalid value: "object": podSetAssignments must have the same number of podSets'
    assert cut == whole == [f"{refused} as the spec"]


# --- rules reading a little of a value, generated ----------------------------------------------

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {
            "type": "object",
            "properties": {"b": {"type": "integer"}, "c": {"type": "array", "items": {"type": "integer"}}},
        },
        "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        "dash-key": {"type": "integer"},
        "l": {"type": "array", "items": {"type": "object", "properties": {"b": {"type": "integer"}}}},
    },
}
_RULES = [
    "has(self.a) ? self.a.b >= 0 : true",
    "size(self.l) <= 2 || size(self.m) > 0",
    "has(self.a.c) && size(self.a.c) > 1",
    "!has(self.m) || self.m.all(k, self.m[k] > 0)",
    "has(self.dash__dash__key) ? self.dash__dash__key < 5 : true",
    "self.l.exists(i, has(i.b) && i.b == 1)",
    "size(self.m) == 0 || has(self.m.x)",
    "self.a == oldSelf.a",
    "!has(oldSelf.a) || size(self.l) >= size(oldSelf.l)",
    "self.a.b + size(self.a.c) != 3",
    "has(self.a) || size(self.l) > 0",
    "!has(self.a.c) || self.a.b == 1",
    "self.l.all(i, !has(i.b) || i.b >= 0)",
    "self.l.exists_one(i, has(i.b)) || size(self.l) != 2",
    "self.l.all(i, i.b > 0)",
    "self.l.exists(i, true) == has(self.a)",
    "self.l.all(i, i == {'b': 1})",
    "self.m.all(k, k != 'x')",
    "self.a.c.all(n, n > 0 && self.l.exists(i, has(i.b) && i.b == n))",
]
_INT = st.one_of(st.integers(-2, 3), st.none())
_VALUES = st.fixed_dictionaries(
    {},
    optional={
        "a": st.fixed_dictionaries({}, optional={"b": _INT, "c": st.lists(st.integers(0, 3), max_size=3)}),
        "m": st.dictionaries(st.sampled_from(["x", "y", "z-z"]), st.integers(-1, 2), max_size=3),
        "dash-key": _INT,
        "l": st.lists(st.fixed_dictionaries({}, optional={"b": _INT}), max_size=3),
    },
)
# One tree per rule, so that each is cut to its own reads (one node's rules share a cut).
_TREES = [
    compile_tree({**_SCHEMA, "x-kubernetes-validations": [{"rule": r}]}, resource_root=False) for r in _RULES
]


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.one_of(st.none(), _VALUES))
def test_generated_values_give_the_same_verdict_cut_or_whole(
    obj: dict[str, Any], old: dict[str, Any] | None
) -> None:
    for tree in _TREES:
        assert tree is not None
        cut, whole = _both(tree, obj, old)
        assert cut == whole
