"""The one pod-set inference: Kueue's counts for Ray kinds, AppWrapper components of every known kind.

Counts follow Kueue's integrations (kubernetes-sigs/kueue v0.14 pkg/controller/jobs/raycluster
and rayjob ``PodSets``: a worker group without ``replicas`` counts 1, times ``numOfHosts``) and
the AppWrapper's (project-codeflare/appwrapper pkg/utils, inferred pod sets incl. JobSet).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.api import podsets
from codeflare.k8s.types import Obj


def pod(cpu: str = "1") -> Obj:
    return {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def ray_spec(groups: list[Obj]) -> Obj:
    return {"headGroupSpec": {"template": pod()}, "workerGroupSpecs": groups}


def test_a_worker_group_without_replicas_counts_one_as_kueue_counts_it() -> None:
    job = {
        "spec": ray_spec(
            [
                {"groupName": "w", "template": pod()},
                {"groupName": "m", "numOfHosts": 2, "replicas": 3, "template": pod()},
            ]
        )
    }
    assert [(ps.name, ps.count) for ps in podsets.raycluster_pod_sets(job)] == [
        ("head", 1),
        ("w", 1),
        ("m", 6),
    ]


def test_a_jobset_only_appwrapper_has_pod_sets() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [
                {"name": "w", "replicas": 2, "template": {"spec": {"parallelism": 3, "template": pod("2")}}}
            ]
        },
    }
    aw = {"spec": {"components": [{"template": jobset}]}}
    sets = podsets.appwrapper_pod_sets(aw)
    assert [(ps.name, ps.count, podsets.pod_requests(ps.template)) for ps in sets] == [
        ("c0-p0", 6, {"cpu": "2"})
    ]
    assert sets[0].path == (
        "spec",
        "components",
        0,
        "template",
        "spec",
        "replicatedJobs",
        0,
        "template",
        "spec",
        "template",
    )


def test_declared_pod_sets_win_and_default_to_one_replica() -> None:
    component = {
        "template": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x"},
            "spec": {"t": pod()},
        },
        "podSets": [{"path": "template.spec.t"}],
    }
    assert podsets.component_pod_sets(component) == [{"path": "template.spec.t", "replicas": 1}]
    assert podsets.appwrapper_pod_sets({"spec": {"components": [component]}})[0].count == 1


def test_an_unresolvable_declared_path_queues_nothing_for_it() -> None:
    component = {
        "template": {"kind": "ConfigMap", "metadata": {"name": "x"}},
        "podSets": [{"path": "template.nope"}],
    }
    assert podsets.appwrapper_pod_sets({"spec": {"components": [component]}}) == []


groups = st.lists(
    st.fixed_dictionaries(
        {"groupName": st.sampled_from(["a", "b", "c"]), "template": st.just(pod())},
        optional={"replicas": st.integers(0, 5), "numOfHosts": st.integers(1, 4)},
    ),
    max_size=4,
)


@given(groups)
def test_queueing_and_the_appwrapper_controller_count_the_same_pods(worker_groups: list[Obj]) -> None:
    """A RayCluster queued itself, or wrapped in an AppWrapper: the same pods, counted once."""
    spec = ray_spec(worker_groups)
    component = {
        "template": {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "rc"},
            "spec": spec,
        }
    }
    own = sum(ps.count for ps in podsets.raycluster_pod_sets({"spec": spec}))
    wrapped = sum(ps.count for ps in podsets.appwrapper_pod_sets({"spec": {"components": [component]}}))
    assert own == wrapped == podsets.expected_pods([component])
    expected = 1 + sum(g.get("replicas", 1) * g.get("numOfHosts", 1) for g in worker_groups)
    assert own == expected


def test_a_rayjob_in_k8s_job_mode_has_kuberays_default_submitter() -> None:
    job = {"spec": {"rayClusterSpec": ray_spec([])}}
    names = [ps.name for ps in podsets.rayjob_pod_sets(job)]
    assert names == ["head", "submitter"]
    assert podsets.pod_requests(podsets.rayjob_pod_sets(job)[-1].template) == podsets.SUBMITTER_REQUESTS
    http = {"spec": {"rayClusterSpec": ray_spec([]), "submissionMode": "HTTPMode"}}
    assert [ps.name for ps in podsets.rayjob_pod_sets(http)] == ["head"]
