"""Discovery names the resource of any kind (no plural guessing), cached per group-version."""

from __future__ import annotations

from typing import Any

from codeflare.kube import errors, kinds
from codeflare.kube.discovery import Discovery, kinds_from_resource_list
from codeflare.kube.kinds import Kind

NETWORKING = [
    {"name": "ingresses", "kind": "Ingress", "namespaced": True},
    {"name": "ingresses/status", "kind": "Ingress", "namespaced": True},
    {"name": "ingressclasses", "kind": "IngressClass", "namespaced": False},
    {"name": "networkpolicies", "kind": "NetworkPolicy", "namespaced": True},
]


class Lister:
    """Serves scripted APIResourceLists and counts the discovery calls."""

    def __init__(self, served: dict[str, list[dict[str, Any]]]) -> None:
        self.served = served
        self.calls: list[str] = []

    async def api_resources(self, api_version: str) -> list[dict[str, Any]]:
        self.calls.append(api_version)
        if api_version not in self.served:
            raise errors.NotFound(f"{api_version} not served", status=404)
        return self.served[api_version]


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_resource_lists_give_plural_and_scope_and_skip_subresources() -> None:
    found = kinds_from_resource_list("networking.k8s.io/v1", NETWORKING)
    assert found == {
        "Ingress": Kind("networking.k8s.io", "v1", "Ingress", "ingresses"),
        "IngressClass": Kind("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False),
        "NetworkPolicy": Kind("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies"),
    }
    core = kinds_from_resource_list("v1", [{"name": "endpoints", "kind": "Endpoints", "namespaced": True}])
    assert core["Endpoints"] == Kind("", "v1", "Endpoints", "endpoints")


async def test_unknown_kinds_are_looked_up_once_per_group_version() -> None:
    lister = Lister({"networking.k8s.io/v1": NETWORKING})
    discovery = Discovery(lister)
    found = await discovery.kind_for("networking.k8s.io/v1", "IngressClass")
    assert found is not None and found.plural == "ingressclasses" and not found.namespaced
    assert await discovery.kind_of({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass"}) == found
    assert lister.calls == ["networking.k8s.io/v1"]


async def test_known_kinds_need_no_call() -> None:
    lister = Lister({})
    discovery = Discovery(lister)
    assert await discovery.kind_for("networking.k8s.io/v1", "NetworkPolicy") == kinds.NETWORK_POLICY
    assert await discovery.kind_for("v1", "Pod") == kinds.POD
    assert lister.calls == []


async def test_a_kind_not_served_is_none_and_looked_up_again_when_the_list_is_stale() -> None:
    clock = Clock()
    lister = Lister({})
    discovery = Discovery(lister, refresh_after=30, clock=clock)
    assert await discovery.kind_for("example.com/v1", "Widget") is None
    assert await discovery.kind_for("example.com/v1", "Widget") is None
    assert lister.calls == ["example.com/v1"]  # the miss is cached for a while
    lister.served["example.com/v1"] = [{"name": "widgets", "kind": "Widget", "namespaced": True}]
    clock.now = 31  # the CRD was installed meanwhile
    widget = await discovery.kind_for("example.com/v1", "Widget")
    assert widget == Kind("example.com", "v1", "Widget", "widgets")
    assert lister.calls == ["example.com/v1", "example.com/v1"]


async def test_malformed_types_resolve_to_none_without_a_call() -> None:
    lister = Lister({})
    discovery = Discovery(lister)
    assert await discovery.kind_for("", "Widget") is None and await discovery.kind_for("v1", "") is None
    assert lister.calls == []
