"""Kueue's controller and scheduler integration tests, ported as data (objects and steps).

Sources: kubernetes-sigs/kueue v0.14.8, test/integration/singlecluster/ — ``scheduler/
scheduler_test.go`` (S), ``scheduler/preemption_test.go`` (P), ``controller/core/
clusterqueue_controller_test.go`` (CQ), ``localqueue_controller_test.go`` (LQ) and
``workload_controller_test.go`` (WL), and v0.19.2's hierarchical Cohort cases of scheduler_test.go
(``cases_cohorts``); each case's key is ``<file>: <Describe/When> / <It>``. The
workloads are created directly, as Kueue's tests create them (``MakeWorkload``: one pod set
"main"). Where the case needs something we do not serve (admission checks, Cohort objects,
metrics names), the case keeps what applies and docs/conformance/controllers.md says what was
left out. Pending messages are Kueue's where the controller words them (missing or stopped
queues); quota shortfalls are the engine's words, so only their reason ("Pending") is compared.
"""

from __future__ import annotations

from tests.conformance import (
    cases_cohorts,
    cases_core,
    cases_preemption,
    cases_scheduler,
    cases_scheduler_queues,
)
from tests.conformance.cases_common import CASES

__all__ = ["CASES"]
# importing the case modules files their cases
MODULES = (cases_scheduler, cases_scheduler_queues, cases_preemption, cases_core, cases_cohorts)
CASES.update(cases_cohorts.COHORT_CASES)  # Kueue v0.19.2's hierarchical Cohort cases, after the others
