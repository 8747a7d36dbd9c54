"""Port Kueue's table-driven scheduler tests to YAML case data (run once, by hand, not by tests).

``python -m codeflare.scheduling.tests.conformance.extract <kueue git dir> <rev>`` reads
``pkg/scheduler/flavorassigner/flavorassigner_test.go``, ``pkg/scheduler/preemption/
preemption_test.go`` and ``pkg/scheduler/scheduler_test.go`` at ``rev`` and writes one YAML
file per source beside this module: per case its Kueue test and case name, the objects
(flavors, ClusterQueues, usage, workloads) and the expectations, as plain data. Wrapper methods
it does not know (TAS, fair sharing, workload slices, hierarchical cohorts, ...) are recorded
as ``unsupported`` so the case is listed as differing with that reason rather than dropped.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from codeflare.scheduling.tests.conformance.goexpr import (
    BinOp,
    Call,
    Comp,
    FuncLit,
    Ident,
    Parser,
    Sel,
    chain,
    declare_locals,
    dotted,
)

HERE = Path(__file__).parent


class Unsupported(Exception):
    """A wrapper method or value the engine has no counterpart for."""


_CONST_PREFIXES = (
    "PreemptionPolicy",
    "BorrowWithinCohortPolicy",
    "TaintEffect",
    "TolerationOp",
    "NodeSelectorOp",
    "LabelSelectorOp",
)
_RESOURCES = {"ResourceCPU": "cpu", "ResourceMemory": "memory", "ResourcePods": "pods"}
_PLAIN = {
    "Borrow",
    "TryNextFlavor",
    "Preempt",
    "StrictFIFO",
    "BestEffortFIFO",
    "Fit",
    "NoFit",
    "MayStopSearch",
    "Never",
    "Any",
    "LowerPriority",
    "LowerOrNewerEqualPriority",
    "InClusterQueueReason",
    "InCohortReclamationReason",
    "InCohortReclaimWhileBorrowingReason",
    "InCohortFairSharingReason",
    "LessThanOrEqualToFinalShare",
    "LessThanInitialShare",
    "WorkloadPreempted",
    "WorkloadEvicted",
    "WorkloadQuotaReserved",
    "WorkloadAdmitted",
}
_IGNORED_METHODS = {
    "Labels",
    "Label",
    "Annotations",
    "UID",
    "JobUID",
    "ControllerReference",
    "ResourceVersion",
    "Generation",
    "SchedulingStatsEviction",
    "PastAdmittedTime",
    "ResourceRequests",
    "Finalizers",
}
"""Metadata and bookkeeping the engine does not see: skipped without evaluating their arguments."""
_TIME = {"Second": 1, "Minute": 60, "Hour": 3600, "Millisecond": 0.001}


def _const(name: str) -> Any:
    last = name.rsplit(".", 1)[-1]
    if last in _RESOURCES:
        return _RESOURCES[last]
    if last == "DefaultPodSetName":
        return "main"
    for prefix in _CONST_PREFIXES:
        if last.startswith(prefix) and last != prefix:
            return last[len(prefix) :]
    if last in _PLAIN:
        return last.removesuffix("Reason")
    if last in ("ConditionTrue", "ConditionFalse"):
        return last[len("Condition") :]
    if last in ("Reclaim", "NoCandidates"):
        return last
    if last in ("Ki", "Mi", "Gi"):
        return {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}[last]
    if name.startswith("time.") and last in _TIME:
        return _TIME[last]
    if last in ("true", "false"):
        return last == "true"
    if last == "nil":
        return None
    raise Unsupported(name)


class Evaluator:
    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env

    def __call__(self, node: Any) -> Any:
        if isinstance(node, (str, int, float)) or node is None:
            return node
        if isinstance(node, Ident):
            if node.name in self.env:
                return _copy(self.env[node.name])
            return _const(node.name)
        if isinstance(node, BinOp):
            left, right = self(node.left), self(node.right)
            if node.op == "*":
                return left * right
            return left + right if node.op == "+" else left - right
        if isinstance(node, Comp):
            if node.items and all(k is not None for k, _ in node.items):
                return {self._key(k): self(v) for k, v in node.items}
            return [self(v) for _, v in node.items]
        if isinstance(node, Sel):
            if isinstance(node.base, Ident) and node.base.name in self.env:
                raise Unsupported(f"field {node.name}")
            return _const(dotted(node))
        if isinstance(node, Call):
            return self.call(node)
        raise Unsupported(type(node).__name__)

    def func_body(self, body: str) -> Any:
        """Run a func literal made of ``x := expr`` statements and one ``return expr``."""
        env = dict(self.env)
        inner = Evaluator(env)
        parser = Parser(body)
        while parser.peek()[0] != "eof":
            kind, value = parser.peek()
            if value == "return":
                parser.take()
                return inner(parser.expr())
            if kind == "id" and parser.peek(1)[1] == ":" and parser.peek(2)[1] == "=":
                parser.i += 3
                env[value] = inner(parser.expr())
                continue
            raise Unsupported("func literal statement")
        raise Unsupported("func literal without return")

    def _key(self, key: Any) -> Any:
        if isinstance(key, Ident):
            return key.name
        if isinstance(key, Comp):
            return tuple(sorted((self._key(k), self(v)) for k, v in key.items))
        if isinstance(key, Sel):
            try:
                return _const(dotted(key))
            except Unsupported:
                return dotted(key)
        return self(key)

    def call(self, node: Call) -> Any:
        if isinstance(node.func, FuncLit) and not node.args:
            return self.func_body(node.func.body)
        steps = chain(node)
        head, args = steps[0]
        obj = self(args[0]) if head == "<base>" else self.start(head, [self(a) for a in args], args)
        for name, margs in steps[1:]:
            obj = self.method(obj, name, margs)
        return obj

    def start(self, head: str, args: list[Any], raw: list[Any]) -> Any:
        if head in ("To", "MustParse", "NewTime", "NewQuantity", "Ptr"):
            return args[0]
        if head == "SingleContainerForRequest":
            return {"_kind": "containers", "requests": {k: str(v) for k, v in args[0].items()}}
        if head == "NewStatus":
            return list(args)
        if head == "singlePodSetAssignment":
            return {"PodSets": [{"Name": "main", "Flavors": args[0], "Count": 1}]}
        if head == "MakeResourceFlavor":
            return {"_kind": "flavor", "name": args[0], "nodeLabels": {}, "nodeTaints": [], "tolerations": []}
        if head == "MakeClusterQueue":
            return {"_kind": "cq", "name": args[0], "resourceGroups": []}
        if head == "targetKeyReason":  # preemption_fair_test.go: "namespace/name" and the reason
            return [args[0], args[1]]
        if head == "New":  # sets.New
            return list(args)
        if head == "MakeCohort":
            return {"_kind": "cohort", "name": args[0], "resourceGroups": []}
        if head == "MakeFlavorQuotas":
            return {"_kind": "fq", "name": args[0], "resources": []}
        if head == "MakePodSet":
            return {"_kind": "ps", "name": args[0], "count": args[1], "requests": {}}
        if head == "MakeWorkload":
            return {
                "_kind": "wl",
                "name": args[0],
                "namespace": args[1] or "default",
                "priority": 0,
                "podSets": [{"name": "main", "count": 1, "requests": {}}],
                "conditions": [],
            }
        if head == "MakeAdmission":
            names = args[1:] or ["main"]
            return {
                "_kind": "adm",
                "clusterQueue": args[0],
                "podSetAssignments": [{"name": n, "flavors": {}, "usage": {}} for n in names],
            }
        if head == "MakePodSetAssignment":
            return {"_kind": "psa", "name": args[0], "flavors": {}, "usage": {}}
        if head == "MakeLocalQueue":
            return {"_kind": "lq", "name": args[0], "namespace": args[1] or "default"}
        if head == "Now":
            return 0
        raise Unsupported(head)

    def method(self, obj: Any, name: str, raw: list[Any]) -> Any:
        if name in ("Obj", "Clone", "DeepCopy", "Truncate", "UTC", "Append"):
            return obj.get("_parent", obj) if name == "Append" and isinstance(obj, dict) else obj
        if name in _IGNORED_METHODS:
            return obj
        args = [self(a) for a in raw]
        if isinstance(obj, (int, float)) and name == "Add":
            return obj + args[0]
        kind = obj.get("_kind") if isinstance(obj, dict) else None
        handler = getattr(self, f"_{kind}_{name}", None)
        if handler is None:
            raise Unsupported(f"{kind}.{name}")
        result = handler(obj, *args)
        return obj if result is None else result

    # ResourceFlavor
    def _flavor_NodeLabel(self, f: dict, k: str, v: str) -> None:
        f["nodeLabels"][k] = v

    def _flavor_Taint(self, f: dict, t: dict) -> None:
        f["nodeTaints"].append(t)

    def _flavor_Toleration(self, f: dict, t: dict) -> None:
        f["tolerations"].append(t)

    # ClusterQueue
    def _cq_ResourceGroup(self, cq: dict, *fqs: dict) -> None:
        covered: list[str] = []
        for fq in fqs:
            for r in fq["resources"]:
                if r["name"] not in covered:
                    covered.append(r["name"])
        cq["resourceGroups"].append({"coveredResources": covered, "flavors": [_clean(f) for f in fqs]})

    def _cq_Cohort(self, cq: dict, c: str) -> None:
        cq["cohort"] = c

    def _cq_FairWeight(self, cq: dict, w: Any) -> None:
        cq["fairWeight"] = str(w)

    # Cohort
    def _cohort_Parent(self, c: dict, parent: str) -> None:
        c["parentName"] = parent

    def _cohort_ResourceGroup(self, c: dict, *fqs: dict) -> None:
        self._cq_ResourceGroup(c, *fqs)

    def _cohort_FairWeight(self, c: dict, w: Any) -> None:
        c["fairWeight"] = str(w)

    def _cq_Preemption(self, cq: dict, p: dict) -> None:
        cq["preemption"] = p

    def _cq_FlavorFungibility(self, cq: dict, f: dict) -> None:
        cq["flavorFungibility"] = f

    def _cq_QueueingStrategy(self, cq: dict, s: str) -> None:
        cq["queueingStrategy"] = s

    def _cq_NamespaceSelector(self, cq: dict, s: Any) -> None:
        cq["namespaceSelector"] = s if s is not None else "null"

    def _cq_StopPolicy(self, cq: dict, s: str) -> None:
        cq["stopPolicy"] = s

    # FlavorQuotas
    def _fq_Resource(
        self, fq: dict, name: str, nominal: str = "0", borrow: str | None = None, lend: str | None = None
    ) -> None:
        entry: dict[str, Any] = {"name": name, "nominalQuota": str(nominal)}
        if borrow is not None and borrow != "":
            entry["borrowingLimit"] = str(borrow)
        if lend is not None and lend != "":
            entry["lendingLimit"] = str(lend)
        fq["resources"].append(entry)

    def _fq_ResourceQuotaWrapper(self, fq: dict, name: str) -> dict:
        entry = {"name": name, "nominalQuota": "0"}
        fq["resources"].append(entry)
        return {"_kind": "rq", "_parent": fq, "entry": entry}

    def _rq_NominalQuota(self, rq: dict, v: str) -> None:
        rq["entry"]["nominalQuota"] = str(v)

    def _rq_BorrowingLimit(self, rq: dict, v: str) -> None:
        rq["entry"]["borrowingLimit"] = str(v)

    def _rq_LendingLimit(self, rq: dict, v: str) -> None:
        rq["entry"]["lendingLimit"] = str(v)

    # PodSet
    def _ps_Request(self, ps: dict, r: str, q: Any) -> None:
        ps["requests"][r] = str(q)

    def _ps_Containers(self, ps: dict, containers: dict) -> None:
        ps["requests"].update(containers["requests"])

    def _ps_Toleration(self, ps: dict, t: dict) -> None:
        ps.setdefault("tolerations", []).append(t)

    def _ps_NodeSelector(self, ps: dict, s: dict) -> None:
        ps["nodeSelector"] = s

    def _ps_RequiredDuringSchedulingIgnoredDuringExecution(self, ps: dict, terms: list) -> None:
        ps["nodeAffinity"] = [t.get("MatchExpressions", []) for t in terms]

    # Workload
    def _wl_Request(self, wl: dict, r: str, q: Any) -> None:
        wl["podSets"][0]["requests"][r] = str(q)

    def _wl_PodSets(self, wl: dict, *ps: dict) -> None:
        wl["podSets"] = [_clean(p) for p in ps]

    def _wl_Name(self, wl: dict, name: str) -> None:
        wl["name"] = name

    def _wl_Priority(self, wl: dict, p: int) -> None:
        wl["priority"] = p

    def _wl_Queue(self, wl: dict, q: str) -> None:
        wl["queue"] = q

    def _wl_Creation(self, wl: dict, t: float) -> None:
        wl["created"] = t

    def _wl_ReserveQuota(self, wl: dict, adm: dict) -> None:
        wl["admission"] = _clean(adm)

    def _wl_ReserveQuotaAt(self, wl: dict, adm: dict, t: float) -> None:
        wl["admission"] = _clean(adm)
        wl["admittedAt"] = t

    def _wl_SimpleReserveQuota(self, wl: dict, cq: str, flavor: str, t: float) -> None:
        adm = {"clusterQueue": cq, "podSetAssignments": []}
        for ps in wl["podSets"]:
            adm["podSetAssignments"].append(
                {"name": ps["name"], "flavors": dict.fromkeys(ps["requests"], flavor), "usage": {}}
            )
        wl["admission"] = adm
        wl["admittedAt"] = t

    def _wl_Admitted(self, wl: dict, v: bool) -> None:
        wl["admittedCondition"] = v

    def _wl_AdmittedAt(self, wl: dict, v: bool, t: float) -> None:
        wl["admittedCondition"] = v

    def _wl_SetOrReplaceCondition(self, wl: dict, c: dict) -> None:
        wl["conditions"].append({"type": c.get("Type"), "status": c.get("Status"), "reason": c.get("Reason")})

    def _wl_Condition(self, wl: dict, c: dict) -> None:
        self._wl_SetOrReplaceCondition(wl, c)

    def _wl_Evicted(self, wl: dict, *a: Any) -> None:
        wl["conditions"].append({"type": "WorkloadEvicted", "status": "True", "reason": "Preempted"})

    def _wl_ControllerReference(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_UID(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_JobUID(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_Labels(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_ResourceVersion(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_Generation(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_SchedulingStatsEviction(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_PastAdmittedTime(self, wl: dict, *a: Any) -> None:
        return None

    def _wl_Active(self, wl: dict, v: bool) -> None:
        wl["active"] = v

    # Admission
    def _adm_Assignment(self, adm: dict, r: str, f: str, q: Any) -> None:
        psa = adm["podSetAssignments"][0]
        psa["flavors"][r] = f
        psa["usage"][r] = str(q)

    def _adm_AssignmentPodCount(self, adm: dict, n: int) -> None:
        adm["podSetAssignments"][0]["count"] = n

    def _adm_PodSets(self, adm: dict, *psas: dict) -> None:
        adm["podSetAssignments"] = [_clean(p) for p in psas]

    def _psa_Assignment(self, psa: dict, r: str, f: str, q: Any) -> None:
        psa["flavors"][r] = f
        psa["usage"][r] = str(q)

    def _psa_Count(self, psa: dict, n: int) -> None:
        psa["count"] = n

    # LocalQueue
    def _lq_ClusterQueue(self, lq: dict, cq: str) -> None:
        lq["clusterQueue"] = cq


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _matching(text: str, start: int, open_: str = "{", close: str = "}") -> int:
    """Index just past the bracket closing the one at ``start`` (strings skipped)."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch in '"`':
            end = (
                text.index(ch, i + 1)
                if ch == "`"
                else re.compile(r'(?<!\\)(?:\\\\)*"').search(text, i + 1).end() - 1
            )  # type: ignore[union-attr]
            i = end + 1
            continue
        if text.startswith("//", i):
            i = text.index("\n", i)
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise SyntaxError("unbalanced")


def function_body(source: str, name: str) -> str:
    start = source.index(f"func {name}(")
    brace = source.index("{", start)
    return source[brace : _matching(source, brace)]


def locals_and_cases(body: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """The function's ``x := expr`` values before ``cases``, and the cases map (raw trees)."""
    cases_at = re.search(r"\n\t(?:cases|testCases|tests) := map\[string\]struct ?\{", body)
    assert cases_at is not None
    env_raw: dict[str, Any] = {}
    for m in re.finditer(r"\n\t(\w+) := ", body[: cases_at.start()]):
        expr_start = m.end()
        parser = Parser(body[expr_start : expr_start + 200000])
        try:
            env_raw[m.group(1)] = parser.expr()
        except SyntaxError:
            continue
    struct_open = body.index("{", cases_at.end() - 1)
    struct_end = _matching(body, struct_open)
    lit_open = body.index("{", struct_end)
    lit_end = _matching(body, lit_open)
    literal = body[lit_open:lit_end]
    declare_locals(set(env_raw) | {"now", "baseIncomingWl", "wl"})
    tree = Parser(literal).composite("")
    cases: dict[str, Any] = {}
    names: dict[str, str] = {}
    for key, value in tree.items:
        cases[key] = value
    return env_raw, cases, names


def evaluate_env(env_raw: dict[str, Any]) -> dict[str, Any]:
    env: dict[str, Any] = {"now": 0}
    ev = Evaluator(env)
    for name, tree in env_raw.items():
        try:
            env[name] = ev(tree)
        except (Unsupported, KeyError, IndexError, TypeError, AttributeError):
            continue
    return env


_IGNORED_FIELDS = {
    "wantEvents",
    "eventCmpOpts",
    "wantSkippedPreemptions",
    "wantWorkloads_",
    "wantPreemptedEvents",
}


def fields(comp: Comp, ev: Evaluator) -> tuple[dict[str, Any], list[str]]:
    out: dict[str, Any] = {}
    unsupported: list[str] = []
    for key, value in comp.items:
        name = key.name if isinstance(key, Ident) else str(key)
        if name in _IGNORED_FIELDS:
            continue
        try:
            out[name] = ev(value)
        except (Unsupported, KeyError, IndexError, TypeError, AttributeError) as exc:
            unsupported.append(f"{name}: {exc}")
    return out, unsupported


def read(git_dir: str, rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{rev}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def main(argv: list[str]) -> None:
    from codeflare.scheduling.tests.conformance import convert

    git_dir, rev = argv[1], argv[2]
    docs: dict[str, dict[str, Any]] = {}
    for out_name, path, func, converter in convert.SOURCES:
        source = read(git_dir, rev, path)
        body = function_body(source, func)
        env_raw, cases, _ = locals_and_cases(body)
        env = evaluate_env(env_raw)
        doc = docs.setdefault(
            out_name, {"source": f"kubernetes-sigs/kueue {rev} {path}", "shared": {}, "cases": []}
        )
        doc["shared"][func] = _clean(convert.shared(func, env))
        for name, comp in cases.items():
            data, unsupported = fields(comp, Evaluator(env))
            record = _clean(converter(name, data, unsupported, env))
            if not doc["source"].endswith(path):
                record["file"] = path  # a second Kueue test file ported into the same YAML
            doc["cases"].append(record)
    for out_name, doc in docs.items():
        prefix = out_name.split(".")[0][:3]
        for n, case in enumerate(doc["cases"], 1):
            case["id"] = f"{prefix}-{n:03d}"
        target = HERE / out_name
        target.write_text(yaml.dump(doc, Dumper=_NoAliases, sort_keys=False, width=110))
        sys.stdout.write(f"{target.name}: {len(doc['cases'])} cases\n")


if __name__ == "__main__":
    main(sys.argv)
