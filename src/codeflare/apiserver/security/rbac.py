"""Role-based access control: the rules of stored Roles, ClusterRoles and their bindings, decided.

:class:`RbacIndex` follows the store's change stream and keeps the RBAC objects parsed in memory
(bindings indexed by subject), so a decision never scans the store. ``authorize(user, attrs)``
answers ``(allowed, reason)`` the way Kubernetes' RBAC authorizer does: members of
``system:masters`` are superusers; otherwise a rule of a role bound to the user, one of the user's
groups or (for service accounts) the account must match verb, API group, resource/subresource,
resourceName or non-resource URL. ClusterRoles with an ``aggregationRule`` take the rules of the
ClusterRoles their selectors pick. This module does no I/O and knows nothing of HTTP; the
bootstrap roles are :mod:`bootstrap_policy`'s, written at startup by the server.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from codeflare.apiserver.context import UserInfo
from codeflare.apiserver.registry.selectors import LabelSelector
from codeflare.apiserver.storage.store import DELETED, Change, ObjectStore

log = logging.getLogger(__name__)

RBAC_GROUP = "rbac.authorization.k8s.io"
AUTHZ_GROUP = "authorization.k8s.io"
AUTHN_GROUP = "authentication.k8s.io"
ROLES, CLUSTER_ROLES = f"{RBAC_GROUP}/roles", f"{RBAC_GROUP}/clusterroles"
ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS = f"{RBAC_GROUP}/rolebindings", f"{RBAC_GROUP}/clusterrolebindings"
RBAC_KEYS = frozenset({ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS})
SUPERUSER_GROUP = "system:masters"
SA_PREFIX = "system:serviceaccount:"


class Attributes(Protocol):
    """What a request does (:class:`~codeflare.apiserver.context.RequestAttributes` has this shape)."""

    verb: str
    path: str
    resource_request: bool
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str


@dataclass(frozen=True)
class Rule:
    """One PolicyRule, normalised to tuples."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verbs": list(self.verbs)}
        if self.non_resource_urls:
            out["nonResourceURLs"] = list(self.non_resource_urls)
        else:
            out["apiGroups"] = list(self.api_groups)
            out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(self.resource_names)
        return out


@dataclass(frozen=True)
class Binding:
    """A RoleBinding (namespace set) or ClusterRoleBinding (namespace ''), parsed."""

    kind: str
    namespace: str
    name: str
    role_kind: str
    role_name: str
    subjects: tuple[tuple[str, str], ...]  # ("User" | "Group", name); service accounts as users

    def describe(self) -> str:
        where = f' in namespace "{self.namespace}"' if self.namespace else ""
        return f'{self.kind} "{self.name}"{where} of {self.role_kind} "{self.role_name}"'


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def parse_rules(value: Any) -> list[Rule]:
    """PolicyRules of a stored role; malformed entries are skipped (they grant nothing)."""
    rules = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, dict):
            continue
        rules.append(
            Rule(
                _strings(item.get("verbs")),
                _strings(item.get("apiGroups")),
                _strings(item.get("resources")),
                _strings(item.get("resourceNames")),
                _strings(item.get("nonResourceURLs")),
            )
        )
    return rules


def subject_keys(subjects: Any, binding_namespace: str) -> tuple[tuple[str, str], ...]:
    """Subjects as ("User" | "Group", name); a ServiceAccount is its user name."""
    out = []
    for subject in subjects if isinstance(subjects, list) else []:
        if not isinstance(subject, dict) or not isinstance(subject.get("name"), str):
            continue
        kind, name = subject.get("kind"), subject["name"]
        if kind in ("User", "Group"):
            out.append((str(kind), name))
        elif kind == "ServiceAccount":
            namespace = subject.get("namespace") or binding_namespace
            if isinstance(namespace, str) and namespace:
                out.append(("User", f"{SA_PREFIX}{namespace}:{name}"))
    return tuple(out)


# -- matching ----------------------------------------------------------------------------------
def _verb_matches(rule: Rule, verb: str) -> bool:
    return "*" in rule.verbs or verb in rule.verbs


def _resource_matches(rule: Rule, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for candidate in rule.resources:
        if candidate in ("*", combined):
            return True
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


def _url_matches(rule: Rule, path: str) -> bool:
    for url in rule.non_resource_urls:
        if url == "*" or url == path:
            return True
        if url.endswith("*") and path.startswith(url[:-1]):
            return True
    return False


def rule_allows(rule: Rule, attrs: Attributes) -> bool:
    """Whether one rule grants the request (Kubernetes' RuleAllows)."""
    if not _verb_matches(rule, attrs.verb):
        return False
    if not attrs.resource_request:
        return _url_matches(rule, attrs.path)
    if rule.non_resource_urls and not rule.resources:
        return False
    if "*" not in rule.api_groups and attrs.group not in rule.api_groups:
        return False
    if not _resource_matches(rule, attrs.resource, attrs.subresource):
        return False
    if rule.resource_names:
        return bool(attrs.name) and attrs.name in rule.resource_names
    return True


def user_subjects(user: UserInfo) -> list[tuple[str, str]]:
    return [("User", user.username), *(("Group", g) for g in user.groups)]


# -- the index ---------------------------------------------------------------------------------
class RbacIndex:
    """Parsed RBAC objects of one store, kept current from its change stream."""

    def __init__(self, store: ObjectStore | None = None) -> None:
        self._roles: dict[tuple[str, str], list[Rule]] = {}
        self._cluster_roles: dict[str, tuple[list[Rule], dict[str, str], list[LabelSelector] | None]] = {}
        self._bindings: dict[tuple[str, str, str], Binding] = {}
        self._by_subject: dict[tuple[str, str], list[Binding]] | None = None
        self._effective: dict[str, list[Rule]] = {}
        if store is not None:
            for key in RBAC_KEYS:
                for obj in store.iter(key):
                    self.observe(key, obj, deleted=False)
            store.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.key in RBAC_KEYS:
            self.observe(change.key, change.obj, deleted=change.type == DELETED)

    def observe(self, key: str, obj: dict[str, Any], *, deleted: bool) -> None:
        """Apply one stored RBAC object (created, changed or deleted) to the index."""
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        if key == ROLES:
            if deleted:
                self._roles.pop((namespace, name), None)
            else:
                self._roles[(namespace, name)] = parse_rules(obj.get("rules"))
        elif key == CLUSTER_ROLES:
            self._effective.clear()
            if deleted:
                self._cluster_roles.pop(name, None)
            else:
                self._cluster_roles[name] = (
                    parse_rules(obj.get("rules")),
                    dict(meta.get("labels") or {}),
                    _aggregation_selectors(obj.get("aggregationRule")),
                )
        else:
            kind = "RoleBinding" if key == ROLE_BINDINGS else "ClusterRoleBinding"
            self._by_subject = None
            if deleted:
                self._bindings.pop((kind, namespace, name), None)
                return
            ref: dict[str, Any] = obj["roleRef"] if isinstance(obj.get("roleRef"), dict) else {}
            self._bindings[(kind, namespace, name)] = Binding(
                kind,
                namespace,
                name,
                str(ref.get("kind") or ""),
                str(ref.get("name") or ""),
                subject_keys(obj.get("subjects"), namespace),
            )

    def _subject_index(self) -> dict[tuple[str, str], list[Binding]]:
        if self._by_subject is None:
            index: dict[tuple[str, str], list[Binding]] = {}
            for binding in sorted(self._bindings.values(), key=lambda b: (b.kind, b.namespace, b.name)):
                for subject in set(binding.subjects):
                    index.setdefault(subject, []).append(binding)
            self._by_subject = index
        return self._by_subject

    def cluster_role_rules(self, name: str) -> list[Rule]:
        """The rules of a ClusterRole, aggregated ones included."""
        cached = self._effective.get(name)
        if cached is not None:
            return cached
        entry = self._cluster_roles.get(name)
        if entry is None:
            return []
        rules, _, selectors = entry
        out = list(rules)
        if selectors:
            for other, (other_rules, labels, _) in sorted(self._cluster_roles.items()):
                if other != name and any(s.matches(labels) for s in selectors):
                    out.extend(r for r in other_rules if r not in out)
        self._effective[name] = out
        return out

    def binding_rules(self, binding: Binding) -> list[Rule]:
        if binding.role_kind == "ClusterRole":
            return self.cluster_role_rules(binding.role_name)
        if binding.role_kind == "Role" and binding.namespace:
            return self._roles.get((binding.namespace, binding.role_name), [])
        return []

    def applicable(self, user: UserInfo, namespace: str) -> Iterable[tuple[Binding, list[Rule]]]:
        """Bindings that apply to ``user`` for a request in ``namespace`` ('' = cluster), with rules."""
        index = self._subject_index()
        seen: set[tuple[str, str, str]] = set()
        for subject in user_subjects(user):
            for binding in index.get(subject, ()):
                if binding.namespace not in ("", namespace):
                    continue
                key = (binding.kind, binding.namespace, binding.name)
                if key in seen:
                    continue
                seen.add(key)
                yield binding, self.binding_rules(binding)

    def authorize(self, user: UserInfo, attrs: Attributes) -> tuple[bool, str]:
        """(allowed, reason): reason names the granting binding, or is '' when denied."""
        if SUPERUSER_GROUP in user.groups:
            return True, f'RBAC: allowed by group "{SUPERUSER_GROUP}" (superuser)'
        namespace = attrs.namespace if attrs.resource_request else ""
        for binding, rules in self.applicable(user, namespace):
            if any(rule_allows(rule, attrs) for rule in rules):
                return True, f"RBAC: allowed by {binding.describe()} to {_describe_user(user)}"
        return False, ""

    def rules_for(self, user: UserInfo, namespace: str) -> list[Rule]:
        """Every rule that applies to ``user`` in ``namespace`` (SelfSubjectRulesReview)."""
        if SUPERUSER_GROUP in user.groups:
            return [Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",))]
        out: list[Rule] = []
        for _, rules in self.applicable(user, namespace):
            out.extend(r for r in rules if r not in out)
        return out


def _aggregation_selectors(value: Any) -> list[LabelSelector] | None:
    if not isinstance(value, dict):
        return None
    selectors = []
    for item in value.get("clusterRoleSelectors") or []:
        if isinstance(item, dict):
            try:
                selectors.append(LabelSelector.from_dict(item))
            except Exception:  # a malformed selector selects nothing
                log.warning("ignoring malformed clusterRoleSelector %r", item)
    return selectors


def _describe_user(user: UserInfo) -> str:
    if user.username.startswith(SA_PREFIX):
        namespace, _, name = user.username[len(SA_PREFIX) :].partition(":")
        return f'ServiceAccount "{name}" in namespace "{namespace}"'
    return f'User "{user.username}"'


# -- escalation prevention -------------------------------------------------------------------
def covers(held: list[Rule], wanted: Rule) -> bool:
    """Whether ``held`` grants everything ``wanted`` grants (wildcards must be held as wildcards)."""
    for verb in wanted.verbs:
        if wanted.non_resource_urls:
            for url in wanted.non_resource_urls:
                if not any(_url_covered(r, verb, url) for r in held):
                    return False
            continue
        for group in wanted.api_groups:
            for resource in wanted.resources:
                base, _, sub = resource.partition("/")
                for name in wanted.resource_names or ("",):
                    if not any(_rule_covers(r, verb, group, base, sub, name) for r in held):
                        return False
    return True


def _rule_covers(rule: Rule, verb: str, group: str, resource: str, sub: str, name: str) -> bool:
    if not ("*" in rule.verbs or verb in rule.verbs):
        return False
    if not ("*" in rule.api_groups or group in rule.api_groups):
        return False
    if resource == "*":
        if not any(r == "*" for r in rule.resources):
            return False
    elif not _resource_matches(rule, resource, sub):
        return False
    if rule.resource_names:
        return bool(name) and name in rule.resource_names
    return True


def _url_covered(rule: Rule, verb: str, url: str) -> bool:
    if not ("*" in rule.verbs or verb in rule.verbs):
        return False
    if url.endswith("*"):
        return any(u == "*" or (u.endswith("*") and url.startswith(u[:-1])) for u in rule.non_resource_urls)
    return _url_matches(rule, url)
