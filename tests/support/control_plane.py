"""Helpers for tests that run the operator against a real embedded API server process.

Installs the project's CRDs through the API, writes the operator's ConfigMap, starts the operator
as its own process (so tests can SIGKILL it) and waits for observable conditions.
"""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from codeflare.api.crds import load_crds
from codeflare.kube import errors, kinds
from codeflare.kube.client import Kube
from codeflare.operator.config import CONFIG_KEY, CONFIGMAP_NAME, OperatorConfig
from tests.support.child_process import ChildProcess, spawn_cli, terminate
from tests.support.polling import wait_for as wait_for  # re-exported: the one polling helper

OPERATOR_NAMESPACE = "codeflare-system"


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
            [*verbose, "operator", "--kubeconfig", str(self.kubeconfig), "--namespace", self.namespace,
             *self.extra_args],
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
