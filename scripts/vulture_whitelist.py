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

import re2
from ray._private import ray_constants

import codeflare
from codeflare.apiserver.registry import managed_fields, patch
from codeflare.apiserver.registry.resources import ResourceType
from codeflare.apiserver.registry.watch import WatchHub
from codeflare.apiserver.security.admission.webhooks import Webhook
from codeflare.apiserver.storage.store import ObjectStore
from codeflare.k8s.workqueue import ManualClock
from codeflare.local.agent import processes
from codeflare.local.agent.cluster_runner import LocalRayCluster
from codeflare.local.agent.identity import ProcStat
from codeflare.local.agent.ports import PortAllocator, RayNodePorts
from codeflare.operator import config, raycluster
from codeflare.scheduling.engine import AdmissionEngine
from codeflare.scheduling.results import Preempted
from codeflare.sdk import widgets
from codeflare.sdk.cluster import Cluster
from codeflare.sdk.status import CodeFlareClusterStatus

# Python calls a module's __getattr__ for the lazy top-level names (``from codeflare import Cluster``).
codeflare.__getattr__

# Public SDK API with codeflare-sdk's names: used by notebooks and scripts, not by our code.
Cluster.job_client  # Ray's JobSubmissionClient for the cluster's dashboard
CodeFlareClusterStatus.QUEUEING  # kept so code written for codeflare-sdk's enum still runs
widgets.view_clusters  # notebook widgets (codeflare-sdk's name), tested by tests/dashboard/test_widgets.py
widgets.view_queues

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

# The API server: tables and parsers its unit tests check directly, parsed webhook configuration
# fields (kept as Kubernetes has them), and handles held for their lifetime.
patch.SUPPORTED_PATCH_CONTENT_TYPES  # registry/tests/test_patch.py
managed_fields.manager_from_user_agent  # registry/tests/test_managed_fields.py: kubectl's manager names
Webhook.side_effects  # sideEffects of a webhook configuration, parsed and kept (dry-run not served)

# The local agent: /proc/<pid>/stat fields parsed as a record, and test handles.
LocalRayCluster.wait_workers_ready  # agent/tests/test_cluster_runner.py
RayNodePorts.all_ports  # agent/tests/test_cluster_runner.py: two clusters never share a port
PortAllocator.reserve
PortAllocator.reservations
processes.node_processes  # agent/tests/test_processes.py

# The ports a RayCluster exposes, unpacked together as KubeRay documents them.
raycluster.GCS_PORT

# Ray's own module flag, set by codeflare.local.agent.ray_launch and read inside Ray.
ray_constants.ENABLE_RAY_CLUSTER

# RE2's compile options, read by its C++ library (codeflare.k8s.schema.checks turns error logging off).
re2.Options().log_errors


def _instance_attributes(hub: WatchHub, store: ObjectStore, resource: ResourceType, stat: ProcStat) -> None:
    """Attributes set per instance (a class has no such attribute to touch at import time)."""
    hub._unsubscribe  # the store subscription, held while the hub lives
    store._path
    resource.preferred  # a resource type field (discovery order), set for every served version
    stat.comm  # /proc/<pid>/stat fields, parsed as one record
    stat.ppid
    stat.pgrp
    stat.session
_instance_attributes  # this file's own holder of the lines above

# Kueue's legacy (gate-off) reasons for the 0.19 codes: read by the conformance runner in tests/,
# whose ported v0.14 cases expect "Pending"/"Inadmissible".
from codeflare.operator.queueing import reason_codes  # noqa: E402

reason_codes.legacy_reason

# Ray's KubeRay provider module globals, set by codeflare.local.agent.autoscaler_launch in its own
# process and read inside Ray's autoscaler (the token path, the monitor's own address).
from ray.autoscaler._private.kuberay import node_provider, run_autoscaler  # noqa: E402

node_provider.IN_CLUSTER_TOKEN_PATH
run_autoscaler.get_node_ip_address

# pickle's hooks on the forecast's engine copy (frozen model values shared, not copied): called by
# pickle.Pickler.dump / pickle.Unpickler.load.
from codeflare.scheduling import forecast as _forecast_fork  # noqa: E402

_forecast_fork._SharingPickler.reducer_override
_forecast_fork._SharingUnpickler.find_class

# pydantic calls these validators by decorator (webhook.service: fixed ports, distinct ports).
config.WebhookConfig._fixed_ports
config.WebhookService._distinct_ports
