"""The one operator harness for tests: a real operator against a real embedded API server.

Installs the project's CRDs through the API and writes the operator's ConfigMap, then runs the
operator one of two ways: :class:`OperatorProcess`, ``codeflare operator`` as a child process
(tests can SIGKILL it, read its log, run it as a ServiceAccount), or :class:`ThreadedOperator`,
the same ``run_operator`` in a thread of the test process (fast to start; :meth:`stop` deletes the
ConfigMap, which makes the operator return cleanly; readiness from its real ``/readyz``, metrics
on :attr:`ThreadedOperator.metrics_port` for tests that show nothing happened, see
``tests/operator/operator_metrics.py``). Waiting is :func:`tests.support.polling.wait_for`.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from codeflare.api.crds import load_crds
from codeflare.kube import errors, kinds
from codeflare.kube.client import Kube
from codeflare.kube.config import from_kubeconfig
from codeflare.operator.config import CONFIG_KEY, CONFIGMAP_NAME, OperatorConfig, config_map
from codeflare.operator.main import run_operator
from tests.support.apiserver import ServerProcess, free_port
from tests.support.child_process import ChildProcess, spawn_cli, terminate
from tests.support.polling import wait_for as wait_for  # re-exported: the one polling helper

OPERATOR_NAMESPACE = "codeflare-system"


@contextlib.contextmanager
def stopping(operator: OperatorProcess, *clients: Kube) -> Iterator[OperatorProcess]:
    """Stops ``operator`` and closes ``clients`` when the block ends, then prints the tail of the
    operator's log (which pytest shows when the test fails)."""
    try:
        yield operator
    finally:
        operator.stop()
        for client in clients:
            client.close()
        print(operator.log()[-4000:])


@contextlib.contextmanager
def operator_plane(
    server: ServerProcess, log: Path, *, flavor: bool = True, **sections: Any
) -> Iterator[tuple[Kube, OperatorProcess]]:
    """The CRDs installed and the operator's ConfigMap written (``quiet_config(**sections)``) on
    ``server``, the operator started as a process logging to ``log``, and (``flavor``) the
    "default" ResourceFlavor created; everything stopped (:func:`stopping`) when the block ends."""
    kube = Kube(from_kubeconfig(server.kubeconfig))
    install_crds(kube)
    write_operator_config(kube, quiet_config(**sections))
    operator = OperatorProcess(server.kubeconfig, log).start()
    with stopping(operator, kube):
        if flavor:
            kube.create(kinds.RESOURCE_FLAVOR, {"metadata": {"name": "default"}, "spec": {}})
        yield kube, operator


def install_crds(kube: Kube) -> None:
    for crd in load_crds():
        with contextlib.suppress(errors.AlreadyExists):
            kube.create(kinds.CRD, crd)


def ensure_namespace(kube: Kube, name: str, labels: dict[str, str] | None = None) -> None:
    with contextlib.suppress(errors.AlreadyExists):
        kube.create(kinds.NAMESPACE, {"metadata": {"name": name, "labels": labels or {}}})


def write_operator_config(
    kube: Kube, overrides: dict[str, Any], namespace: str = OPERATOR_NAMESPACE, name: str = CONFIGMAP_NAME
) -> str:
    """Store a configuration (defaults + ``overrides``, camelCase) in ConfigMap ``name``; return its YAML."""
    ensure_namespace(kube, namespace)
    doc = OperatorConfig.default().to_dict()
    for section, values in overrides.items():
        if isinstance(values, dict) and isinstance(doc.get(section), dict):
            merged = dict(doc[section])
            merged.update(values)
            doc[section] = merged
        else:
            doc[section] = values
    text = yaml.safe_dump(doc, sort_keys=False)
    body = {"metadata": {"name": name, "namespace": namespace}, "data": {CONFIG_KEY: text}}
    if kube.find(kinds.CONFIGMAP, name, namespace) is None:
        kube.create(kinds.CONFIGMAP, body)
    else:
        kube.patch(kinds.CONFIGMAP, name, {"data": {CONFIG_KEY: text}}, namespace)
    return text


def quiet_config(**sections: Any) -> dict[str, Any]:
    """Overrides every test wants: probes off, fast backoff, no capacity check; plus ``sections``."""
    base: dict[str, Any] = {
        "metrics": {"bindAddress": "0"},
        "health": {"bindAddress": "0"},
        "queueing": {"backoffTime": "1s", "capacityCheck": False},
        "instascale": {"enabled": False},
        "appwrapper": {"enabled": False},
    }
    for key, value in sections.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return base


@dataclass
class OperatorProcess(ChildProcess):
    """``codeflare operator`` as a child process."""

    kubeconfig: Path
    log_path: Path
    namespace: str = OPERATOR_NAMESPACE
    extra_args: list[str] = field(default_factory=list)
    verbosity: int = 0  # 2 logs at DEBUG (e.g. the client's conflict retries)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> OperatorProcess:
        verbose = ["-" + "v" * self.verbosity] if self.verbosity else []
        self.proc = spawn_cli(
            [
                *verbose,
                "operator",
                "--kubeconfig",
                str(self.kubeconfig),
                "--namespace",
                self.namespace,
                *self.extra_args,
            ],
            self.log_path,
        )
        return self

    def stop(self) -> int | None:
        return None if self.proc is None else terminate(self.proc, 15)

    def wait_exit(self, timeout: float = 30) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class ThreadedOperator:
    def __init__(self, server: ServerProcess, config: dict[str, Any]) -> None:
        self.connection = from_kubeconfig(server.kubeconfig)
        self.health_port = free_port()
        self.metrics_port = free_port()
        document = {
            "metrics": {"bindAddress": f"127.0.0.1:{self.metrics_port}"},
            "health": {"bindAddress": f"127.0.0.1:{self.health_port}"},
            "instascale": {"enabled": False},
            **config,
        }
        self.config = OperatorConfig.from_dict(document)
        self.status: int | None = None
        self.thread = threading.Thread(target=self._run, name="operator", daemon=True)

    def _run(self) -> None:
        self.status = asyncio.run(run_operator(self.connection, OPERATOR_NAMESPACE))

    def start(self, timeout: float = 30.0) -> ThreadedOperator:
        with Kube(self.connection) as kube:
            install_crds(kube)
            ensure_namespace(kube, OPERATOR_NAMESPACE)
            kube.apply(kinds.CONFIGMAP, config_map(OPERATOR_NAMESPACE, self.config))
        self.thread.start()

        def ready() -> bool:
            assert self.thread.is_alive(), f"operator exited with {self.status}"
            return self.readyz()[0] == 200

        wait_for(ready, timeout, what="the operator's /readyz")
        return self

    def readyz(self) -> tuple[int, str]:
        url = f"http://127.0.0.1:{self.health_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return 0, str(error)

    def stop(self) -> None:
        with Kube(self.connection) as kube:
            kube.delete(kinds.CONFIGMAP, CONFIGMAP_NAME, OPERATOR_NAMESPACE)
        self.thread.join(30)
