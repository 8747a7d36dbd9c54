"""An old state directory upgrades in place: a new server migrates objects to the storage version.

The state is written as an older release writes it: the CRD stores v1 and the objects are at v1.
The CRD then moves its storage to v2 (with the conversion webhook), which - as on kube-apiserver -
migrates nothing by itself: ``storedVersions`` lists both. A restarted server migrates the objects
through the webhook and trims ``storedVersions``; with the webhook failing at start-up it keeps the
objects readable and retries until the webhook answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.conversion_support import GROUP, ConversionWebhook, widget_crd
from tests.apiserver.http_support import client, ok
from tests.support.apiserver import ServerProcess
from tests.support.polling import wait_for

CRD = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{GROUP}"
V1, V2 = f"/apis/{GROUP}/v1/namespaces/default/widgets", f"/apis/{GROUP}/v2/namespaces/default/widgets"


@pytest.fixture
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConversionWebhook]:
    srv = ConversionWebhook(tmp_path_factory.mktemp("conv-certs")).start()
    try:
        yield srv
    finally:
        srv.stop()


def _old_state(server: ServerProcess, hook: ConversionWebhook, count: int) -> None:
    """v1-stored widgets, then the CRD moved to v2 storage (kube keeps both in storedVersions)."""
    with client(server) as c:
        ok(
            c.post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                json=widget_crd("widgets", None, storage="v1"),
            )
        )
        wait_for(lambda: c.get(V1).status_code == 200, 10, what="widgets served")
        for i in range(count):
            body = {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Widget",
                "metadata": {"name": f"w{i}"},
                "spec": {"size": i},
            }
            ok(c.post(V1, json=body))
        crd = ok(c.get(CRD))
        new = widget_crd("widgets", {"url": hook.url, "caBundle": hook.ca_bundle}, storage="v2")
        crd["spec"] = new["spec"]
        ok(c.put(CRD, json=crd))
        assert ok(c.get(CRD))["status"]["storedVersions"] == ["v1", "v2"]


def _stored_versions(c: httpx.Client) -> list[Any]:
    return list(ok(c.get(CRD))["status"]["storedVersions"])


def test_a_restarted_server_migrates_old_objects_to_the_storage_version(
    fresh_apiserver: ServerProcess, hook: ConversionWebhook
) -> None:
    _old_state(fresh_apiserver, hook, 20)
    fresh_apiserver.restart()
    with client(fresh_apiserver) as c:
        wait_for(lambda: _stored_versions(c) == ["v2"], 20, what="storedVersions trimmed to v2")
        hook.mode = "failed"  # migrated: v2 reads need no conversion any more
        items = ok(c.get(V2))["items"]
        assert sorted((o["metadata"]["name"], o["spec"]["dimension"]) for o in items) == sorted(
            (f"w{i}", i) for i in range(20)
        )
        hook.mode = "ok"
        assert ok(c.get(f"{V1}/w7"))["spec"] == {"size": 7}


def test_migration_waits_for_the_webhook_and_keeps_objects_readable(
    fresh_apiserver: ServerProcess, hook: ConversionWebhook
) -> None:
    _old_state(fresh_apiserver, hook, 3)
    hook.mode = "failed"
    fresh_apiserver.restart()
    with client(fresh_apiserver) as c:
        wait_for(lambda: len(hook.reviews) >= 2, 20, what="a migration attempt and its retry")
        assert _stored_versions(c) == ["v1", "v2"]
        assert ok(c.get(f"{V1}/w2"))["spec"] == {"size": 2}  # stored at v1: no conversion needed
        hook.mode = "ok"
        wait_for(lambda: _stored_versions(c) == ["v2"], 60, what="the retried migration")
        hook.mode = "failed"
        assert ok(c.get(f"{V2}/w2"))["spec"] == {"dimension": 2}
