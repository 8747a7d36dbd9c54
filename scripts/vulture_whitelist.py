"""Names the dead-code scan reports but that are used where it cannot see, each with the reason.

Run the scan with this file so it counts these names as used:

    .venv/bin/vulture src/codeflare scripts/vulture_whitelist.py --min-confidence 60 --exclude "*/tests/*"

Each line touches one name, so running this file (``.venv/bin/python scripts/vulture_whitelist.py``)
fails with an AttributeError once a listed name is renamed or removed: then drop or fix its line.
A name belongs here only when it is used on purpose where the scan does not look (by users, by
pydantic, by the tests it exists for); code that is truly unused is deleted instead.
"""

# ruff: noqa: B018  (each line's attribute access is the point: it marks the name as used)
from __future__ import annotations

import codeflare
from codeflare.k8s.workqueue import ManualClock
from codeflare.operator import config
from codeflare.scheduling.engine import AdmissionEngine
from codeflare.scheduling.results import Preempted
from codeflare.sdk.cluster import Cluster
from codeflare.sdk.status import CodeFlareClusterStatus

# Python calls a module's __getattr__ for the lazy top-level names (``from codeflare import Cluster``).
codeflare.__getattr__

# Public SDK API with codeflare-sdk's names: used by notebooks and scripts, not by our code.
Cluster.job_client  # Ray's JobSubmissionClient for the cluster's dashboard
CodeFlareClusterStatus.QUEUEING  # kept so code written for codeflare-sdk's enum still runs

# pydantic reads these: the model configuration, and validators it calls by decorator.
config._Section.model_config
config.LeaderElectionConfig._renew_within_lease
config.LeaderElectionConfig._retry_within_renew
config.FaultToleranceConfig._warmup_covers_admission
config.WebhookConfig._not_disabled

# Fields of the configuration document (ARCHITECTURE.md section 4), read from the ConfigMap and
# validated. Nothing applies clientConnection's limits to the operator's client yet.
config.OperatorConfig().client_connection
config.ClientConnectionConfig().qps
config.ClientConnectionConfig().burst
config.OperatorConfig.from_config_map  # the typed reading of a ConfigMap; deploy's and config's tests use it

# Test handles: the injectable clock's way to move time, the engine's invariant check, result data.
ManualClock.advance  # k8s/tests/test_workqueue.py and the controllers' manual-clock tests
AdmissionEngine.quota_violations  # the scheduling property tests' invariant
AdmissionEngine.update_workload  # the engine's documented requeue call; the benchmark makes it
AdmissionEngine.update_cluster_queue  # "add or replace" where a test changes a queue
Preempted("victim", "preemptor", "InClusterQueue", "cq", "").preemptor  # result data tests read
