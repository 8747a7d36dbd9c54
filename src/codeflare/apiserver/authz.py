"""Authorization wiring: the RBAC authorizer, the bootstrap roles, and the review endpoints.

:class:`Authorization` turns an :class:`~codeflare.apiserver.rbac.RbacIndex` into the HTTP layer's
``Authorizer`` and answers SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview,
SelfSubjectRulesReview, TokenReview and SelfSubjectReview from the same rules and the same
authenticator the server uses, so ``kubectl auth can-i`` and webhooks see exactly what a request
would. It also writes Kubernetes' default ClusterRoles and bindings when they are missing and
refuses RBAC writes that would grant more than the writer holds (escalation). Review bodies are
validated field by field; a bad one is 422, never a 500. It does not decide rules (that is rbac).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestContext, UserInfo
from codeflare.apiserver.rbac import (
    RBAC_GROUP,
    SUPERUSER_GROUP,
    RbacIndex,
    Rule,
    covers,
    parse_rules,
)
from codeflare.apiserver.resources import ResourceRegistry, ResourceType

log = logging.getLogger(__name__)

AUTHZ_GROUP = "authorization.k8s.io"
AUTHN_GROUP = "authentication.k8s.io"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
CRD_GROUPS = ("ray.io", "workload.codeflare.dev", "kueue.x-k8s.io")

# Authenticator as the reviews need it: "Bearer <token>" -> user or None.
Authenticate = Callable[[str | None], UserInfo | None]


# -- bootstrap policy ------------------------------------------------------------------------
def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]


def _view_rules() -> list[dict[str, Any]]:
    return [
        _rule(
            [""],
            [
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "pods/log",
                "pods/status",
                "replicationcontrollers",
                "services",
                "services/status",
                "serviceaccounts",
                "events",
                "resourcequotas",
                "resourcequotas/status",
                "limitranges",
                "namespaces",
                "namespaces/status",
            ],
            _READ,
        ),
        _rule(
            ["apps"],
            [
                "deployments",
                "deployments/scale",
                "deployments/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
                "replicasets",
                "daemonsets",
            ],
            _READ,
        ),
        _rule(["batch"], ["jobs", "jobs/status", "cronjobs", "cronjobs/status"], _READ),
        _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], _READ),
        _rule(["events.k8s.io"], ["events"], _READ),
        _rule(["coordination.k8s.io"], ["leases"], _READ),
        _rule(["ray.io"], ["rayclusters", "rayclusters/status", "rayjobs", "rayjobs/status"], _READ),
        _rule(["workload.codeflare.dev"], ["appwrappers", "appwrappers/status"], _READ),
        _rule(
            ["kueue.x-k8s.io"], ["localqueues", "localqueues/status", "workloads", "workloads/status"], _READ
        ),
    ]


def _edit_rules() -> list[dict[str, Any]]:
    return [
        _rule(
            [""],
            [
                "pods",
                "pods/exec",
                "pods/attach",
                "pods/portforward",
                "services",
                "endpoints",
                "configmaps",
                "secrets",
                "persistentvolumeclaims",
                "serviceaccounts",
                "replicationcontrollers",
            ],
            _WRITE,
        ),
        _rule([""], ["secrets"], _READ),
        _rule([""], ["serviceaccounts/token"], ["create"]),
        _rule(
            ["apps"],
            [
                "deployments",
                "deployments/scale",
                "statefulsets",
                "statefulsets/scale",
                "replicasets",
                "daemonsets",
            ],
            _WRITE,
        ),
        _rule(["batch"], ["jobs", "cronjobs"], _WRITE),
        _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], _WRITE),
        _rule(["coordination.k8s.io"], ["leases"], _WRITE),
        _rule(["ray.io"], ["rayclusters", "rayjobs"], _WRITE),
        _rule(["workload.codeflare.dev"], ["appwrappers"], _WRITE),
    ]


def _admin_rules() -> list[dict[str, Any]]:
    return [
        _rule([RBAC_GROUP], ["roles", "rolebindings"], [*_READ, *_WRITE]),
        _rule([AUTHZ_GROUP], ["localsubjectaccessreviews"], ["create"]),
        _rule(["kueue.x-k8s.io"], ["localqueues"], _WRITE),
    ]


def bootstrap_cluster_roles() -> list[dict[str, Any]]:
    """Kubernetes' user-facing default ClusterRoles, with our CRD groups in admin/edit/view."""

    def role(
        name: str,
        rules: list[dict[str, Any]],
        labels: dict[str, str] | None = None,
        aggregate: list[str] | None = None,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "name": name,
            "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(AUTOUPDATE),
        }
        out: dict[str, Any] = {"metadata": meta, "rules": rules}
        if aggregate:
            out["aggregationRule"] = {
                "clusterRoleSelectors": [
                    {"matchLabels": {f"rbac.authorization.k8s.io/aggregate-to-{a}": "true"}}
                    for a in aggregate
                ]
            }
        return out

    discovery_urls = ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/"]
    return [
        role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        role("admin", [], aggregate=["admin", "edit", "view"]),
        role(
            "edit",
            [],
            labels={"rbac.authorization.k8s.io/aggregate-to-admin": "true"},
            aggregate=["edit", "view"],
        ),
        role("view", [], labels={"rbac.authorization.k8s.io/aggregate-to-edit": "true"}, aggregate=["view"]),
        role(
            "system:aggregate-to-admin",
            _admin_rules(),
            labels={"rbac.authorization.k8s.io/aggregate-to-admin": "true"},
        ),
        role(
            "system:aggregate-to-edit",
            _edit_rules(),
            labels={"rbac.authorization.k8s.io/aggregate-to-edit": "true"},
        ),
        role(
            "system:aggregate-to-view",
            _view_rules(),
            labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"},
        ),
        role(
            "system:basic-user",
            [
                _rule([AUTHZ_GROUP], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
                _rule([AUTHN_GROUP], ["selfsubjectreviews"], ["create"]),
            ],
        ),
        role("system:discovery", [{"nonResourceURLs": discovery_urls, "verbs": ["get"]}]),
        role(
            "system:public-info-viewer",
            [
                {
                    "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                    "verbs": ["get"],
                }
            ],
        ),
    ]


def bootstrap_cluster_role_bindings() -> list[dict[str, Any]]:
    def binding(name: str, role: str, groups: list[str]) -> dict[str, Any]:
        return {
            "metadata": {"name": name, "labels": dict(BOOTSTRAP_LABELS), "annotations": dict(AUTOUPDATE)},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in groups],
        }

    return [
        binding("cluster-admin", "cluster-admin", [SUPERUSER_GROUP]),
        binding("system:basic-user", "system:basic-user", ["system:authenticated"]),
        binding("system:discovery", "system:discovery", ["system:authenticated"]),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            ["system:authenticated", "system:unauthenticated"],
        ),
    ]


def review_resources() -> list[ResourceType]:
    """The create-only review resources (not stored; answered by :class:`Authorization`)."""

    def review(group: str, plural: str, kind: str, namespaced: bool = False) -> ResourceType:
        return ResourceType(
            group=group, version="v1", plural=plural, kind=kind, namespaced=namespaced, verbs=("create",)
        )

    return [
        review(AUTHZ_GROUP, "subjectaccessreviews", "SubjectAccessReview"),
        review(AUTHZ_GROUP, "selfsubjectaccessreviews", "SelfSubjectAccessReview"),
        review(AUTHZ_GROUP, "localsubjectaccessreviews", "LocalSubjectAccessReview", namespaced=True),
        review(AUTHZ_GROUP, "selfsubjectrulesreviews", "SelfSubjectRulesReview"),
        review(AUTHN_GROUP, "tokenreviews", "TokenReview"),
        review(AUTHN_GROUP, "selfsubjectreviews", "SelfSubjectReview"),
    ]


# -- request attributes as reviews carry them ------------------------------------------------
@dataclass
class ReviewAttributes:
    """The attributes a review asks about, in the shape :mod:`rbac` matches."""

    verb: str
    path: str = ""
    resource_request: bool = True
    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""


def _group_of(kind: str) -> str:
    return AUTHN_GROUP if kind in ("TokenReview", "SelfSubjectReview") else AUTHZ_GROUP


def _field(kind: str, path: str, detail: str, value: Any) -> errors.ApiError:
    cause = errors.FieldError(errors.FIELD_INVALID, path, detail, value)
    return errors.invalid(kind, "", [cause], _group_of(kind))


def _string(container: dict[str, Any], key: str, kind: str, path: str) -> str:
    value = container.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _field(kind, f"{path}.{key}", "must be a string", value)
    return value


def _object(value: Any, kind: str, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _field(kind, path, "must be an object", value)
    return value


def _check_envelope(body: Any, rt: ResourceType) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON or YAML object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version not in (None, "") and api_version != rt.api_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({rt.api_version})"
        )
    if kind not in (None, "") and kind != rt.kind:
        raise errors.bad_request(
            f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
        )
    _object(body.get("metadata"), rt.kind, "metadata")
    return body


def parse_access_spec(spec: dict[str, Any], kind: str, namespace: str = "") -> ReviewAttributes:
    """resourceAttributes or nonResourceAttributes of an access review, validated."""
    res = _object(spec.get("resourceAttributes"), kind, "spec.resourceAttributes")
    nonres = _object(spec.get("nonResourceAttributes"), kind, "spec.nonResourceAttributes")
    has_res, has_nonres = (
        "resourceAttributes" in spec and spec["resourceAttributes"] is not None,
        ("nonResourceAttributes" in spec and spec["nonResourceAttributes"] is not None),
    )
    if has_res and has_nonres:
        raise errors.invalid(
            kind,
            "",
            [
                errors.FieldError(
                    errors.FIELD_INVALID,
                    "spec.nonResourceAttributes",
                    "cannot be specified in combination with resourceAttributes",
                    "",
                )
            ],
            AUTHZ_GROUP,
        )
    if not has_res and not has_nonres:
        raise errors.invalid(
            kind,
            "",
            [
                errors.FieldError(
                    errors.FIELD_INVALID,
                    "spec.resourceAttributes",
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                    "",
                )
            ],
            AUTHZ_GROUP,
        )
    if has_nonres:
        path = _string(nonres, "path", kind, "spec.nonResourceAttributes")
        verb = _string(nonres, "verb", kind, "spec.nonResourceAttributes")
        return ReviewAttributes(verb, path=path, resource_request=False)
    p = "spec.resourceAttributes"
    attrs = ReviewAttributes(
        _string(res, "verb", kind, p),
        group=_string(res, "group", kind, p),
        version=_string(res, "version", kind, p),
        resource=_string(res, "resource", kind, p),
        subresource=_string(res, "subresource", kind, p),
        namespace=_string(res, "namespace", kind, p),
        name=_string(res, "name", kind, p),
    )
    if namespace:
        if attrs.namespace and attrs.namespace != namespace:
            raise errors.invalid(
                kind,
                "",
                [
                    errors.FieldError(
                        errors.FIELD_INVALID,
                        "spec.resourceAttributes.namespace",
                        "must match metadata.namespace",
                        attrs.namespace,
                    )
                ],
                AUTHZ_GROUP,
            )
        attrs.namespace = namespace
    return attrs


def _user_from_spec(spec: dict[str, Any], kind: str) -> UserInfo:
    user = _string(spec, "user", kind, "spec")
    uid = _string(spec, "uid", kind, "spec")
    groups_raw = spec.get("groups") or []
    if not isinstance(groups_raw, list) or not all(isinstance(g, str) for g in groups_raw):
        raise _field(kind, "spec.groups", "must be a list of strings", groups_raw)
    extra_raw = _object(spec.get("extra"), kind, "spec.extra")
    extra = []
    for key, values in sorted(extra_raw.items()):
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise _field(kind, f"spec.extra.{key}", "must be a list of strings", values)
        extra.append((str(key), tuple(values)))
    if not user and not groups_raw:
        raise errors.invalid(
            kind,
            "",
            [
                errors.FieldError(
                    errors.FIELD_INVALID, "spec.user", "at least one of user or group must be specified", ""
                )
            ],
            AUTHZ_GROUP,
        )
    return UserInfo(user, uid, tuple(groups_raw), tuple(extra))


class Authorization:
    """RBAC decisions for requests, reviews and RBAC writes over one index."""

    def __init__(self, index: RbacIndex, authenticate: Authenticate, *, enabled: bool = True) -> None:
        self.index = index
        self.authenticate = authenticate
        self.enabled = enabled

    # the HTTP layer's Authorizer
    async def authorizer(self, user: UserInfo, attrs: Any) -> str | None:
        allowed, _ = self.decide(user, attrs)
        return None if allowed else ""

    def decide(self, user: UserInfo, attrs: Any) -> tuple[bool, str]:
        if not self.enabled:
            return True, "authorization is always-allow"
        return self.index.authorize(user, attrs)

    # -- reviews ---------------------------------------------------------------------------------
    def handlers(
        self,
    ) -> dict[tuple[str, str], Callable[[ResourceType, Any, RequestContext, Any], Awaitable[dict[str, Any]]]]:
        """(storage key, subresource) -> handler, for the HTTP layer's create-only resources."""
        return {
            (f"{AUTHZ_GROUP}/subjectaccessreviews", ""): self._subject_access_review,
            (f"{AUTHZ_GROUP}/localsubjectaccessreviews", ""): self._subject_access_review,
            (f"{AUTHZ_GROUP}/selfsubjectaccessreviews", ""): self._self_subject_access_review,
            (f"{AUTHZ_GROUP}/selfsubjectrulesreviews", ""): self._self_subject_rules_review,
            (f"{AUTHN_GROUP}/tokenreviews", ""): self._token_review,
            (f"{AUTHN_GROUP}/selfsubjectreviews", ""): self._self_subject_review,
        }

    def _answer(self, rt: ResourceType, body: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        meta = dict(body.get("metadata") or {})
        return {
            "apiVersion": rt.api_version,
            "kind": rt.kind,
            "metadata": meta,
            "spec": body.get("spec") or {},
            "status": status,
        }

    def _access_status(self, user: UserInfo, attrs: ReviewAttributes) -> dict[str, Any]:
        if not attrs.verb:
            return {"allowed": False, "reason": "", "evaluationError": "verb is required"}
        allowed, reason = self.decide(user, attrs)
        out: dict[str, Any] = {"allowed": allowed}
        if reason:
            out["reason"] = reason
        return out

    async def _subject_access_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body = _check_envelope(body, rt)
        spec = _object(body.get("spec"), rt.kind, "spec")
        subject = _user_from_spec(spec, rt.kind)
        review = parse_access_spec(spec, rt.kind, attrs.namespace if rt.namespaced else "")
        if rt.namespaced and not review.resource_request:
            raise errors.invalid(
                rt.kind,
                "",
                [
                    errors.FieldError(
                        errors.FIELD_INVALID,
                        "spec.nonResourceAttributes",
                        "disallowed on this kind of request",
                        "",
                    )
                ],
                AUTHZ_GROUP,
            )
        answer = self._answer(rt, body, self._access_status(subject, review))
        if rt.namespaced:
            answer["metadata"]["namespace"] = attrs.namespace
        return answer

    async def _self_subject_access_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body = _check_envelope(body, rt)
        spec = _object(body.get("spec"), rt.kind, "spec")
        review = parse_access_spec(spec, rt.kind)
        return self._answer(rt, body, self._access_status(ctx.user, review))

    async def _self_subject_rules_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body = _check_envelope(body, rt)
        spec = _object(body.get("spec"), rt.kind, "spec")
        namespace = _string(spec, "namespace", rt.kind, "spec")
        if self.enabled:
            rules = self.index.rules_for(ctx.user, namespace)
        else:
            rules = [Rule(("*",), ("*",), ("*",)), Rule(("*",), non_resource_urls=("*",))]
        resource_rules = [r.to_dict() for r in rules if not r.non_resource_urls]
        nonresource_rules = [
            {"verbs": list(r.verbs), "nonResourceURLs": list(r.non_resource_urls)}
            for r in rules
            if r.non_resource_urls
        ]
        status = {"resourceRules": resource_rules, "nonResourceRules": nonresource_rules, "incomplete": False}
        return self._answer(rt, body, status)

    async def _token_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body = _check_envelope(body, rt)
        spec = _object(body.get("spec"), rt.kind, "spec")
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise errors.invalid(
                rt.kind,
                "",
                [errors.FieldError(errors.FIELD_REQUIRED, "spec.token", "a token is required")],
                AUTHN_GROUP,
            )
        audiences = spec.get("audiences") or []
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise errors.invalid(
                rt.kind,
                "",
                [
                    errors.FieldError(
                        errors.FIELD_INVALID, "spec.audiences", "must be a list of strings", audiences
                    )
                ],
                AUTHN_GROUP,
            )
        user = self.authenticate(f"Bearer {token}")
        if user is None:
            status: dict[str, Any] = {"authenticated": False, "user": {}, "error": "invalid bearer token"}
        else:
            status = {"authenticated": True, "user": user.to_dict()}
            if audiences:
                status["audiences"] = audiences
        return self._answer(rt, body, status)

    async def _self_subject_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body = _check_envelope(body, rt)
        answer = self._answer(rt, body, {"userInfo": ctx.user.to_dict()})
        answer.pop("spec", None)
        return answer

    # -- escalation prevention (a built-in admission step) ---------------------------------------
    def check_rbac_write(self, user: UserInfo, rt: ResourceType, namespace: str, obj: dict[str, Any]) -> None:
        """Refuse a Role/ClusterRole/binding write that grants what ``user`` does not hold.

        Like Kubernetes: holding every granted permission suffices; otherwise the ``escalate``
        verb (roles) or ``bind`` verb on the referenced role (bindings) is needed.
        """
        if not self.enabled or SUPERUSER_GROUP in user.groups or rt.group != RBAC_GROUP:
            return
        name = str((obj.get("metadata") or {}).get("name") or "")
        if rt.plural in ("roles", "clusterroles"):
            wanted = parse_rules(obj.get("rules"))
            if isinstance(obj.get("aggregationRule"), dict):
                return self._require_verb(
                    user, "escalate", rt.plural, namespace, name, rt, wanted_desc="aggregation"
                )
            if self._holds(user, namespace, wanted):
                return
            self._require_verb(
                user, "escalate", rt.plural, namespace, name, rt, wanted_desc=_describe(wanted)
            )
            return
        if rt.plural in ("rolebindings", "clusterrolebindings"):
            ref: dict[str, Any] = obj["roleRef"] if isinstance(obj.get("roleRef"), dict) else {}
            role_kind, role_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
            if role_kind == "ClusterRole":
                wanted = self.index.cluster_role_rules(role_name)
                role_plural = "clusterroles"
            else:
                wanted = self.index.binding_rules(_binding_for(namespace, role_kind, role_name))
                role_plural = "roles"
            if self._holds(user, namespace, wanted):
                return
            self._require_verb(
                user,
                "bind",
                role_plural,
                namespace if role_plural == "roles" else "",
                role_name,
                rt,
                wanted_desc=f'{role_kind} "{role_name}"',
            )

    def _holds(self, user: UserInfo, namespace: str, wanted: list[Rule]) -> bool:
        held = self.index.rules_for(user, namespace)
        return all(covers(held, rule) for rule in wanted)

    def _require_verb(
        self,
        user: UserInfo,
        verb: str,
        plural: str,
        namespace: str,
        name: str,
        rt: ResourceType,
        wanted_desc: str,
    ) -> None:
        probe = ReviewAttributes(verb, group=RBAC_GROUP, resource=plural, namespace=namespace, name=name)
        if self.decide(user, probe)[0]:
            return
        what = "escalate" if verb == "escalate" else "bind"
        raise errors.forbidden(
            f'{rt.qualified} "{name}" is forbidden: user "{user.username}" is attempting to grant RBAC '
            f"permissions not currently held ({wanted_desc}) and may not {what} them",
            rt.plural,
            name,
            rt.group,
        )


def _binding_for(namespace: str, role_kind: str, role_name: str) -> Any:
    from codeflare.apiserver.rbac import Binding

    return Binding("RoleBinding", namespace, "", role_kind, role_name, ())


def _describe(rules: list[Rule]) -> str:
    shown = ["{" + ", ".join(f"{k}: {v}" for k, v in rule.to_dict().items()) + "}" for rule in rules[:3]]
    more = f" and {len(rules) - 3} more" if len(rules) > 3 else ""
    return "; ".join(shown) + more


def register_reviews(registry: ResourceRegistry) -> None:
    for rt in review_resources():
        registry.add(rt)
