"""``codeflare cluster|job|queue`` as users run them: help, output formats, and exit codes.

Commands run in-process through ``codeflare.cli.main.main`` (the same argv a shell passes) and a
few as real subprocesses; the module shares one local mode. Exit codes under test: 0 done, 1 the
system reported a failure (message on stderr, no traceback), 2 refused input naming the field,
3 a wait timed out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from codeflare.cli.main import main
from codeflare.kube import kinds
from codeflare.sdk import FlavorQuota, create_cluster_queue, create_local_queue
from tests.sdk.conftest import QUEUE, Local, venv_path
from tests.support.control_plane import wait_for

TINY = ["--head-cpu", "1", "--head-memory", "1Gi", "--worker-cpu", "1", "--worker-memory", "1Gi"]


class Run:
    """``run("cluster", "list")``: exit code, stdout, stderr of one in-process invocation."""

    def __init__(self, capsys: pytest.CaptureFixture[str], home: Path) -> None:
        self.capsys, self.home = capsys, home

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main([*argv, "--home", str(self.home)])
        out, err = self.capsys.readouterr()
        return code, out, err


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], local: Local) -> Run:
    return Run(capsys, local.home)


def codeflare(*argv: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": venv_path()}
    extra = ["--home", str(home)] if home else []
    return subprocess.run([sys.executable, "-m", "codeflare.cli.main", *argv, *extra], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("argv", [
    [], ["cluster"], ["cluster", "up"], ["cluster", "down"], ["cluster", "list"], ["cluster", "status"],
    ["cluster", "wait"], ["job"], ["job", "submit"], ["job", "status"], ["job", "logs"], ["job", "stop"],
    ["job", "list"], ["queue"], ["queue", "list"], ["queue", "describe"],
])
def test_every_level_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    assert "usage: codeflare" in capsys.readouterr().out


def test_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    missing = codeflare("job", "submit", "j", "--entrypoint", "true", home=tmp_path)
    assert missing.returncode == 2
    assert "--cluster" in missing.stderr and "Traceback" not in missing.stderr

    no_plane = codeflare("cluster", "list", home=tmp_path)
    assert no_plane.returncode == 1
    assert "local mode is not running" in no_plane.stderr and "Traceback" not in no_plane.stderr


def test_invalid_configuration_exits_2_naming_the_field(run: Run) -> None:
    code, _, err = run("cluster", "up", "Bad_Name", "--worker-memory=-1Gi")
    assert code == 2
    assert "name:" in err and "worker_memory_requests" in err and "Traceback" not in err

    code, _, err = run("job", "submit", "j", "--entrypoint", "true", "--cluster", "x", "--worker-cpu", "2")
    assert code == 2 and "--worker-cpu" in err

    code, _, err = run("job", "submit", "j", "--entrypoint", "true", "--cluster", "x", "--queue", QUEUE)
    assert code == 2 and "queue" in err


def test_missing_objects_exit_1_with_the_servers_message(run: Run) -> None:
    for argv in (["cluster", "status", "nope"], ["cluster", "down", "nope"], ["job", "status", "nope"],
                 ["job", "logs", "nope"], ["queue", "describe", "nope"]):
        code, _, err = run(*argv)
        assert code == 1, argv
        assert "not found" in err and "Traceback" not in err, (argv, err)


def test_a_cluster_that_cannot_fit_is_queued_with_a_reason_and_wait_times_out(local: Local, run: Run) -> None:
    create_cluster_queue("small-cq", [FlavorQuota("default-flavor", {"cpu": "1", "memory": "1Gi"})],
                         namespace_selector={}, client=local.client)
    create_local_queue("small", "small-cq", "default", client=local.client)

    code, out, _ = run("cluster", "up", "toobig", "--queue", "small", *TINY, "-o", "json")
    assert code == 0
    assert json.loads(out)["status"] == "queued"
    reason = wait_for(lambda: json.loads(run("cluster", "status", "toobig", "-o", "json")[1])["reason"]
                      if "insufficient" in run("cluster", "status", "toobig")[1] else None, 60, 0.5,
                      what="a pending reason")
    assert "insufficient quota" in reason

    code, out, _ = run("queue", "describe", "small", "-o", "yaml")
    described = yaml.safe_load(out)
    assert code == 0
    assert described["cluster_queue"] == "small-cq"
    assert [q["name"] for q in described["queued"]] == ["toobig"]
    assert "insufficient quota" in described["queued"][0]["reason"]
    code, out, _ = run("queue", "describe", "small")
    assert code == 0 and "toobig" in out and "insufficient quota" in out

    code, out, _ = run("queue", "list", "-o", "json")
    assert code == 0
    assert {"small", QUEUE} <= {q["name"] for q in json.loads(out)}

    code, _, err = run("cluster", "wait", "toobig", "--timeout", "2")
    assert code == 3
    assert "not ready after" in err

    assert run("cluster", "down", "toobig", "--wait")[0] == 0


@pytest.mark.ray
def test_cluster_and_job_commands_end_to_end(local: Local, run: Run, tmp_path: Path) -> None:
    code, out, err = run("cluster", "up", "cli", "--workers", "1", "--queue", QUEUE, *TINY, "--wait")
    assert code == 0, err
    assert "ready" in out
    local.remember("cli")
    code, out, _ = run("cluster", "up", "cli", "--workers", "1", "--queue", QUEUE, *TINY)  # idempotent
    assert code == 0

    code, out, _ = run("cluster", "list", "-o", "json")
    assert code == 0
    listed = {c["name"]: c for c in json.loads(out)}
    assert listed["cli"]["status"] == "ready" and listed["cli"]["workers"] == 1
    code, out, _ = run("cluster", "list")
    assert code == 0 and "cli" in out and "ready" in out
    code, out, _ = run("cluster", "status", "cli", "-o", "json")
    assert code == 0 and json.loads(out)["status"] == "ready" and json.loads(out)["dashboard"]

    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "hello.py").write_text("print('hello from', __name__)\n")
    code, out, err = run("job", "submit", "hello", "--entrypoint", "python hello.py", "--cluster", "cli",
                         "--working-dir", str(workdir), "--wait", "--timeout", "180")
    assert code == 0, err
    code, out, _ = run("job", "logs", "hello")
    assert code == 0 and "hello from __main__" in out
    code, out, _ = run("job", "status", "hello", "-o", "json")
    assert json.loads(out)["job"] == "SUCCEEDED"
    code, out, _ = run("job", "list")
    assert code == 0 and "hello" in out and "SUCCEEDED" in out

    code, out, err = run("job", "submit", "boom", "--entrypoint", "python -c 'raise SystemExit(3)'",
                         "--cluster", "cli", "--wait", "--timeout", "180")
    assert code == 1
    assert "failed" in err.lower()

    for job in ("hello", "boom"):
        assert run("job", "delete", job)[0] == 0
    code, out, _ = run("cluster", "down", "cli", "--wait")
    assert code == 0 and "deleted" in out
    code, out, _ = run("cluster", "list", "-o", "json")
    assert "cli" not in {c["name"] for c in json.loads(out)}


@pytest.mark.ray
def test_job_on_its_own_cluster_and_stop(local: Local, run: Run) -> None:
    code, out, err = run("job", "submit", "own", "--entrypoint", "python -c 'import time; time.sleep(60)'",
                         "--workers", "1", *TINY, "--queue", QUEUE, "-o", "json")
    assert code == 0, err
    assert json.loads(out)["name"] == "own"
    wait_for(lambda: json.loads(run("job", "status", "own", "-o", "json")[1])["job"] == "RUNNING", 180, 1,
             what="own job running")

    cluster = json.loads(run("job", "status", "own", "-o", "json")[1])["cluster"]
    assert cluster

    code, out, _ = run("job", "stop", "own")
    assert code == 0 and "stopped" in out
    wait_for(lambda: local.client.kube.find(kinds.RAYCLUSTER, cluster, "default") is None, 90, 0.5,
             what="the stopped job's cluster released")
    assert local.client.kube.get(kinds.RAYJOB, "own", "default")["spec"].get("suspend") is True
    assert run("job", "delete", "own")[0] == 0
