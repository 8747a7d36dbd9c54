"""The operator run in a thread of the test process, against a test API server, until stopped.

Start it with a configuration (stored in the ConfigMap first); :meth:`stop` deletes the ConfigMap,
which makes the operator return cleanly. Readiness is read from its real ``/readyz`` endpoint; its
``/metrics`` listen on :attr:`ThreadedOperator.metrics_port` (tests read them to show that nothing
happened, see ``tests/operator/operator_metrics.py``).
"""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.request
from typing import Any

from codeflare.kube import kinds
from codeflare.kube.client import Kube
from codeflare.kube.config import from_kubeconfig
from codeflare.operator.config import CONFIGMAP_NAME, OperatorConfig, config_map
from codeflare.operator.main import run_operator
from tests.support.apiserver import ServerProcess, free_port
from tests.support.control_plane import OPERATOR_NAMESPACE, ensure_namespace, install_crds
from tests.support.polling import wait_for


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
