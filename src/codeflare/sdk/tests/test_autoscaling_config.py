"""``enable_autoscaling`` with ``local_queue``: an elastic job for Kueue, with Ray's autoscaler options.

What the RayCluster carries (KubeRay's ``enableInTreeAutoscaling``/``autoscalerOptions``, the
group's ``minReplicas``/``maxReplicas``, Kueue's ``kueue.x-k8s.io/elastic-job`` annotation when
queued) and the refusal of a bad idle timeout, naming the field.
"""

from __future__ import annotations

import pytest

from codeflare.api.builders import build_raycluster
from codeflare.api.raycluster import ELASTIC_JOB_ANNOTATION
from codeflare.sdk.config import ClusterConfiguration


def config(**kwargs: object) -> ClusterConfiguration:
    return ClusterConfiguration("elastic", num_workers=1, enable_autoscaling=True, min_workers=1,
                                max_workers=3, **kwargs)  # type: ignore[arg-type]


def test_autoscaled_and_queued_is_an_elastic_job() -> None:
    obj = build_raycluster(config(local_queue="team-a", idle_timeout_seconds=5), "ns")
    spec = obj["spec"]
    assert spec["enableInTreeAutoscaling"] is True
    assert spec["autoscalerOptions"]["idleTimeoutSeconds"] == 5
    group = spec["workerGroupSpecs"][0]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (1, 1, 3)
    assert obj["metadata"]["annotations"][ELASTIC_JOB_ANNOTATION] == "true"
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert spec["suspend"] is True  # queued: admitted first, then resized by slices


def annotations(settings: ClusterConfiguration) -> dict[str, str]:
    return dict(build_raycluster(settings, "ns")["metadata"].get("annotations") or {})


def test_only_queued_autoscaled_clusters_are_elastic() -> None:
    assert ELASTIC_JOB_ANNOTATION not in annotations(config())
    fixed = ClusterConfiguration("fixed", num_workers=2, local_queue="q")
    assert ELASTIC_JOB_ANNOTATION not in annotations(fixed)


@pytest.mark.parametrize("bad", [0, -5, 1.5, True])
def test_a_bad_idle_timeout_is_refused_naming_the_field(bad: object) -> None:
    with pytest.raises(ValueError, match="idle_timeout_seconds"):
        config(idle_timeout_seconds=bad)
