"""Node-capacity snapshot for the optional capacity check (MCAD's dispatch-time check).

``NodeCapacity`` sums the allocatable resources of schedulable nodes whose labels match a
flavor's ``nodeLabels``, minus usage by pods not managed by us and minus what our admitted
workloads in overlapping flavors already hold. It is an aggregate check: it does not bin-pack
pods onto nodes, and flavors whose node sets partly overlap are charged conservatively.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeflare.scheduling.model import Node, ResourceFlavor

FlavorResource = tuple[str, str]


@dataclass(frozen=True)
class CapacityView:
    """What a flavor's nodes offer for one resource, and what is taken."""

    allocatable: int
    unmanaged: int
    managed: int
    nodes: int

    @property
    def available(self) -> int:
        return max(0, self.allocatable - self.unmanaged - self.managed)


class NodeCapacity:
    """Nodes by name; answers free capacity per (flavor, resource)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self._node_sets: dict[str, frozenset[str]] = {}
        self._overlaps: dict[str, list[str]] = {}

    def set_node(self, name: str, node: Node | None) -> None:
        """Add, replace or (None) remove a node."""
        if node is None:
            self.nodes.pop(name, None)
        else:
            self.nodes[name] = node
        self._node_sets.clear()
        self._overlaps.clear()

    def invalidate(self) -> None:
        """Forget cached flavor->nodes matches (call when flavors change)."""
        self._node_sets.clear()
        self._overlaps.clear()

    def _nodes_of(self, flavor: ResourceFlavor) -> frozenset[str]:
        cached = self._node_sets.get(flavor.name)
        if cached is None:
            labels = flavor.node_labels
            cached = frozenset(
                name
                for name, node in self.nodes.items()
                if not node.unschedulable and all(node.labels.get(k) == v for k, v in labels.items())
            )
            self._node_sets[flavor.name] = cached
        return cached

    def view(
        self,
        flavor: ResourceFlavor,
        resource: str,
        flavors: dict[str, ResourceFlavor],
        flavor_usage: dict[FlavorResource, int],
        workload: str | None = None,
    ) -> CapacityView:
        """Capacity of ``flavor``'s nodes for ``resource`` given our usage per flavor, as
        ``workload`` sees it: nodes reserved for another workload do not count."""
        mine = self._nodes_of(flavor)
        allocatable = unmanaged = counted = 0
        for name in sorted(mine):
            node = self.nodes[name]
            if node.reserved_for is not None and node.reserved_for != workload:
                continue
            counted += 1
            alloc = node.allocatable.get(resource)
            if alloc is not None:
                allocatable += alloc.milli
            used = node.unmanaged_usage.get(resource)
            if used is not None:
                unmanaged += used.milli
        overlapping = self._overlaps.get(flavor.name)
        if overlapping is None:
            overlapping = [
                other.name
                for other in sorted(flavors.values(), key=lambda f: f.name)
                if other.name == flavor.name or self._nodes_of(other) & mine
            ]
            self._overlaps[flavor.name] = overlapping
        managed = sum(flavor_usage.get((other, resource), 0) for other in overlapping)
        return CapacityView(allocatable, unmanaged, managed, counted)
