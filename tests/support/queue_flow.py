"""An end-to-end queueing run: the operator as its own process over real queues, watched for quota.

:func:`queueing_run` sets up what the stress tests of the queueing controller share (the CRDs, a
ClusterQueue and LocalQueue per namespace, the quiet operator configuration), starts a
:class:`QuotaWatcher` and the operator process, and on the way out stops both and prints the tail
of the operator's log. The test in between creates and deletes RayClusters and waits for
convergence (see :mod:`tests.support.queue_objects`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codeflare.kube.client import Kube
from tests.support.apiserver import ServerProcess
from tests.support.control_plane import OperatorProcess, install_crds, quiet_config, write_operator_config
from tests.support.queue_objects import create_flavor_and_queues
from tests.support.quota_watch import QuotaWatcher

Queues = dict[str, tuple[str, int]]  # namespace -> (ClusterQueue name, nominal CPUs)


@dataclass
class QueueingRun:
    """The operator process and the watcher of a :func:`queueing_run`."""

    operator: OperatorProcess
    watcher: QuotaWatcher

    def assert_quota_kept(self) -> None:
        """No ClusterQueue (or cohort) was ever charged beyond its quota and no Workload admitted twice."""
        assert self.watcher.violations == [], self.watcher.violations[:10]
        assert self.watcher.admitted_twice == {}, self.watcher.admitted_twice


@contextmanager
def queueing_run(
    server: ServerProcess,
    kube: Kube,
    queues: Queues,
    operator_log: Path,
    *,
    cohort: str | None = None,
    verbosity: int = 0,
) -> Iterator[QueueingRun]:
    """Queues (all in ``cohort`` when given), a quota watcher and the operator, stopped on exit."""
    install_crds(kube)
    create_flavor_and_queues(kube, {ns: (cq, str(cpus)) for ns, (cq, cpus) in queues.items()}, cohort=cohort)
    write_operator_config(kube, quiet_config())
    watcher = QuotaWatcher(
        server,
        {cq: cpus * 1000 for cq, cpus in queues.values()},
        {cq: cohort for cq, _ in queues.values()} if cohort else None,
    ).start()
    operator = OperatorProcess(server.kubeconfig, operator_log, verbosity=verbosity).start()
    try:
        yield QueueingRun(operator, watcher)
    finally:
        watcher.stop()
        operator.stop()
        print(operator.log()[-4000:])
