"""Re-applying a queued object never takes its admission back (real API server, no operator).

The test plays the queueing controller: it flips ``spec.suspend`` to false with its own field
manager, as the operator does when it admits a workload.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeflare.api.raycluster import build_raycluster
from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.kube.errors import Conflict
from codeflare.sdk import Client
from codeflare.sdk.applying import apply_keeping_admission
from tests.sdk.conftest import tiny
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import install_crds


@pytest.fixture(scope="module")
def client(apiserver: ServerProcess) -> Iterator[Client]:
    sdk = Client.default(apiserver.kubeconfig)
    install_crds(sdk.kube)
    yield sdk
    sdk.close()


@pytest.fixture(scope="module")
def operator(client: Client) -> Iterator[Kube]:
    """A client writing as the operator does (its own field manager)."""
    kube = Kube(client.kube.connection, field_manager="codeflare-operator")
    yield kube
    kube.close()


def _admit(operator: Kube, name: str) -> None:
    operator.patch(kinds.RAYCLUSTER, name, {"spec": {"suspend": False}}, "default")


def test_a_queued_object_is_created_suspended_and_stays_so_on_reapply(client: Client) -> None:
    manifest = build_raycluster(tiny("queued"), "default")

    first = apply_keeping_admission(client.kube, kinds.RAYCLUSTER, manifest)
    second = apply_keeping_admission(client.kube, kinds.RAYCLUSTER, manifest)

    assert first["spec"]["suspend"] is True
    assert second["spec"]["suspend"] is True
    assert second["metadata"]["generation"] == first["metadata"]["generation"]


def test_reapplying_an_admitted_object_keeps_it_running(client: Client, operator: Kube) -> None:
    manifest = build_raycluster(tiny("admitted"), "default")
    apply_keeping_admission(client.kube, kinds.RAYCLUSTER, manifest)
    _admit(operator, "admitted")
    generation = client.kube.get(kinds.RAYCLUSTER, "admitted", "default")["metadata"]["generation"]

    again = apply_keeping_admission(client.kube, kinds.RAYCLUSTER, manifest)

    assert again["spec"].get("suspend") in (None, False)
    assert again["metadata"]["generation"] == generation


def test_an_admission_racing_the_apply_is_a_conflict_not_a_resuspend(client: Client, operator: Kube) -> None:
    # What the helper relies on: the admission lands after our read; our unforced apply that
    # still says suspend=true is refused instead of silently suspending the running object.
    manifest = build_raycluster(tiny("raced"), "default")
    apply_keeping_admission(client.kube, kinds.RAYCLUSTER, manifest)
    _admit(operator, "raced")

    with pytest.raises(Conflict, match="suspend"):
        client.kube.apply(kinds.RAYCLUSTER, manifest, force=False)

    assert client.kube.get(kinds.RAYCLUSTER, "raced", "default")["spec"]["suspend"] is False
