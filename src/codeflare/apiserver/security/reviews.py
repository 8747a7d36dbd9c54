"""The review endpoints: access reviews, rules reviews, token reviews and self-subject reviews.

SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview,
TokenReview and SelfSubjectReview are create-only resources that store nothing; :class:`Reviews`
answers them from the same :class:`~codeflare.apiserver.security.authz.Authorization` and the same
authenticator the server uses, so ``kubectl auth can-i`` and webhooks see exactly what a request
would. Review bodies are validated field by field; a bad one is 422, never a 500.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestAttributes, RequestContext, UserInfo
from codeflare.apiserver.registry.resources import ResourceRegistry, ResourceType
from codeflare.apiserver.registry.rest import check_type_meta
from codeflare.apiserver.security.authz import Authorization
from codeflare.apiserver.security.rbac import AUTHN_GROUP, AUTHZ_GROUP, Rule
from codeflare.k8s.schema.field import ErrorType, FieldError

# Authenticator as the reviews need it: "Bearer <token>" -> user or None.
Authenticate = Callable[[str | None], UserInfo | None]
ReviewHandler = Callable[[ResourceType, Any, RequestContext, Any], Awaitable[dict[str, Any]]]


def review_resources() -> list[ResourceType]:
    """The create-only review resources (not stored; answered by :class:`Reviews`)."""

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


def _group_of(kind: str) -> str:
    return AUTHN_GROUP if kind in ("TokenReview", "SelfSubjectReview") else AUTHZ_GROUP


def _refused(kind: str, cause: FieldError) -> errors.ApiError:
    """The 422 a review of ``kind`` answers for one bad field."""
    return errors.invalid(kind, "", [cause], _group_of(kind))


def _field(kind: str, path: str, detail: str, value: Any) -> errors.ApiError:
    return _refused(kind, FieldError(ErrorType.INVALID, path, detail, value))


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
    check_type_meta(rt, body)
    _object(body.get("metadata"), rt.kind, "metadata")
    return body


def _envelope_and_spec(body: Any, rt: ResourceType) -> tuple[dict[str, Any], dict[str, Any]]:
    """The checked review body and its ``spec`` (``{}`` when absent)."""
    body = _check_envelope(body, rt)
    return body, _object(body.get("spec"), rt.kind, "spec")


def parse_access_spec(spec: dict[str, Any], kind: str, namespace: str = "") -> RequestAttributes:
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
                FieldError(
                    ErrorType.INVALID,
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
                FieldError(
                    ErrorType.INVALID,
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
        return RequestAttributes(verb, path=path, resource_request=False)
    p = "spec.resourceAttributes"
    attrs = RequestAttributes(
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
                    FieldError(
                        ErrorType.INVALID,
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
                FieldError(
                    ErrorType.INVALID, "spec.user", "at least one of user or group must be specified", ""
                )
            ],
            AUTHZ_GROUP,
        )
    return UserInfo(user, uid, tuple(groups_raw), tuple(extra))


class Reviews:
    """Answers the review resources for one :class:`Authorization` and authenticator."""

    def __init__(self, authorization: Authorization, authenticate: Authenticate) -> None:
        self.authorization = authorization
        self.authenticate = authenticate

    def handlers(self) -> dict[tuple[str, str], ReviewHandler]:
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

    def _access_status(self, user: UserInfo, attrs: RequestAttributes) -> dict[str, Any]:
        if not attrs.verb:
            return {"allowed": False, "reason": "", "evaluationError": "verb is required"}
        allowed, reason = self.authorization.decide(user, attrs)
        out: dict[str, Any] = {"allowed": allowed}
        if reason:
            out["reason"] = reason
        return out

    async def _subject_access_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body, spec = _envelope_and_spec(body, rt)
        subject = _user_from_spec(spec, rt.kind)
        review = parse_access_spec(spec, rt.kind, attrs.namespace if rt.namespaced else "")
        if rt.namespaced and not review.resource_request:
            raise _field(rt.kind, "spec.nonResourceAttributes", "disallowed on this kind of request", "")
        answer = self._answer(rt, body, self._access_status(subject, review))
        if rt.namespaced:
            answer["metadata"]["namespace"] = attrs.namespace
        return answer

    async def _self_subject_access_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body, spec = _envelope_and_spec(body, rt)
        review = parse_access_spec(spec, rt.kind)
        return self._answer(rt, body, self._access_status(ctx.user, review))

    async def _self_subject_rules_review(
        self, rt: ResourceType, attrs: Any, ctx: RequestContext, body: Any
    ) -> dict[str, Any]:
        body, spec = _envelope_and_spec(body, rt)
        namespace = _string(spec, "namespace", rt.kind, "spec")
        if self.authorization.enabled:
            rules = self.authorization.index.rules_for(ctx.user, namespace)
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
        body, spec = _envelope_and_spec(body, rt)
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise _refused(rt.kind, FieldError(ErrorType.REQUIRED, "spec.token", "a token is required"))
        audiences = spec.get("audiences") or []
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise _field(rt.kind, "spec.audiences", "must be a list of strings", audiences)
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


def register_reviews(registry: ResourceRegistry) -> None:
    for rt in review_resources():
        registry.add(rt)
