"""Point 12: persistence. One SQLite file in WAL mode; a restart, even after SIGKILL in the middle
of a write load, keeps every acknowledged write, resourceVersions keep increasing and watches
resume from versions handed out before the kill."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

import httpx

from tests.apiserver.http_support import client, cm, ok
from tests.support.apiserver import ServerProcess

CMS = "/api/v1/namespaces/default/configmaps"


def test_state_is_one_sqlite_file_in_wal_mode(fresh_apiserver: ServerProcess) -> None:
    with client(fresh_apiserver) as c:
        ok(c.post(CMS, json=cm("on-disk")), 201)
    db = fresh_apiserver.state_dir / "state.db"
    assert db.exists()
    with sqlite3.connect(str(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_graceful_restart_keeps_everything(fresh_apiserver: ServerProcess) -> None:
    with client(fresh_apiserver) as c:
        created = ok(c.post(CMS, json=cm("kept", {"k": "v"})), 201)
        crd = {
            "metadata": {"name": "keeps.p.example.com"},
            "spec": {
                "group": "p.example.com",
                "scope": "Namespaced",
                "names": {"plural": "keeps", "kind": "Keep"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {"type": "object", "properties": {"n": {"type": "integer"}}}
                        },
                    }
                ],
            },
        }
        ok(c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
        ok(
            c.post(
                "/apis/p.example.com/v1/namespaces/default/keeps", json={"metadata": {"name": "k"}, "n": 1}
            ),
            201,
        )
        token = fresh_apiserver.token
    fresh_apiserver.restart()
    assert fresh_apiserver.token == token
    with client(fresh_apiserver) as c:
        got = ok(c.get(f"{CMS}/kept"))
        assert got == created
        assert ok(c.get("/apis/p.example.com/v1/namespaces/default/keeps/k"))["n"] == 1
        bad = c.post(
            "/apis/p.example.com/v1/namespaces/default/keeps", json={"metadata": {"name": "b"}, "n": "x"}
        )
        assert bad.status_code == 422  # the CRD's schema is served again after the restart


def test_sigkill_during_write_load_loses_no_acknowledged_write(fresh_apiserver: ServerProcess) -> None:
    server = fresh_apiserver
    acknowledged: dict[str, int] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(worker: int) -> None:
        with client(server, timeout=5) as c:
            i = 0
            while not stop.is_set():
                name = f"w{worker}-{i}"
                i += 1
                try:
                    resp = c.post(CMS, json=cm(name, {"i": str(i)}))
                except httpx.HTTPError:
                    return  # the server died under us; this write was never acknowledged
                if resp.status_code == 201:
                    with lock:
                        acknowledged[name] = int(resp.json()["metadata"]["resourceVersion"])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 20
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        time.sleep(0.02)
    server.kill()  # SIGKILL while the writers are still sending
    stop.set()
    for thread in threads:
        thread.join(10)
    assert len(acknowledged) >= 300
    last_rv = max(acknowledged.values())

    server.start()
    with client(server) as c:
        listed = ok(c.get(CMS))
        stored = {i["metadata"]["name"]: int(i["metadata"]["resourceVersion"]) for i in listed["items"]}
        missing = sorted(set(acknowledged) - set(stored))
        assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:5]}"
        assert all(stored[name] == rv for name, rv in acknowledged.items())
        assert int(listed["metadata"]["resourceVersion"]) >= last_rv
        after = ok(c.post(CMS, json=cm("after-restart")), 201)
        assert int(after["metadata"]["resourceVersion"]) > max(stored.values())
        # a watch from the last version acknowledged before the kill resumes and sees what came after
        params = {"watch": "1", "resourceVersion": str(last_rv), "timeoutSeconds": "5"}
        names: list[str] = []
        with c.stream("GET", CMS, params=params) as resp:
            assert resp.status_code == 200
            for line in resp.iter_lines():
                if not line.strip():
                    continue
                event = json.loads(line)
                assert event["type"] == "ADDED", event
                names.append(event["object"]["metadata"]["name"])
                if names[-1] == "after-restart":
                    break
        assert names[-1] == "after-restart"
        assert not set(names) & set(acknowledged)  # only changes after last_rv are replayed
