"""RBAC decisions: the HTTP layer's authorizer and the escalation check on RBAC writes.

:class:`Authorization` turns an :class:`~codeflare.apiserver.security.rbac.RbacIndex` into the
``Authorizer`` the endpoints call for every request, answers the same question for the review
endpoints (:mod:`.reviews`), and refuses a Role, ClusterRole or binding write that would grant
more than the writer holds (Kubernetes' escalation prevention: holding every granted permission
suffices, else the ``escalate`` or ``bind`` verb is needed). It does not match rules itself
(that is :mod:`.rbac`) and serves no HTTP.
"""

from __future__ import annotations

from typing import Any

from codeflare.apiserver import errors
from codeflare.apiserver.context import RequestAttributes, UserInfo
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.security.rbac import (
    RBAC_GROUP,
    SUPERUSER_GROUP,
    Binding,
    RbacIndex,
    Rule,
    covers,
    parse_rules,
)


class Authorization:
    """RBAC decisions for requests, reviews and RBAC writes over one index."""

    def __init__(self, index: RbacIndex, *, enabled: bool = True) -> None:
        self.index = index
        self.enabled = enabled

    async def authorizer(self, user: UserInfo, attrs: Any) -> str | None:
        """The HTTP layer's ``Authorizer``: None when allowed, a (here empty) reason when not."""
        allowed, _ = self.decide(user, attrs)
        return None if allowed else ""

    def decide(self, user: UserInfo, attrs: Any) -> tuple[bool, str]:
        if not self.enabled:
            return True, "authorization is always-allow"
        return self.index.authorize(user, attrs)

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
        probe = RequestAttributes(verb, group=RBAC_GROUP, resource=plural, namespace=namespace, name=name)
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


def _binding_for(namespace: str, role_kind: str, role_name: str) -> Binding:
    return Binding("RoleBinding", namespace, "", role_kind, role_name, ())


def _describe(rules: list[Rule]) -> str:
    shown = ["{" + ", ".join(f"{k}: {v}" for k, v in rule.to_dict().items()) + "}" for rule in rules[:3]]
    more = f" and {len(rules) - 3} more" if len(rules) > 3 else ""
    return "; ".join(shown) + more
