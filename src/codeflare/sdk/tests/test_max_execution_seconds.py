"""``max_execution_seconds``: the SDK's way to Kueue's ``kueue.x-k8s.io/max-exec-time-seconds`` label.

The label (on a RayCluster, its AppWrapper, or a RayJob) sets the Workload's
``spec.maximumExecutionTimeSeconds``, which the operator enforces (operator/queueing/maxexec.py).
"""

from __future__ import annotations

import pytest

from codeflare.api.builders import build_appwrapper, build_raycluster, build_rayjob
from codeflare.k8s.constants import MAX_EXEC_TIME_LABEL
from codeflare.sdk.config import ClusterConfiguration, ConfigurationError


def test_cluster_label() -> None:
    config = ClusterConfiguration(name="c", local_queue="q", max_execution_seconds=90)
    labels = build_raycluster(config, "ns")["metadata"]["labels"]
    assert labels[MAX_EXEC_TIME_LABEL] == "90"
    assert MAX_EXEC_TIME_LABEL not in build_raycluster(ClusterConfiguration(name="c"), "ns")["metadata"].get(
        "labels", {}
    )


def test_the_appwrapper_carries_the_label() -> None:
    config = ClusterConfiguration(name="c", local_queue="q", max_execution_seconds=90)
    wrapper = build_appwrapper(build_raycluster(config, "ns"))
    assert wrapper["metadata"]["labels"][MAX_EXEC_TIME_LABEL] == "90"
    template = wrapper["spec"]["components"][0]["template"]
    assert MAX_EXEC_TIME_LABEL not in (template["metadata"].get("labels") or {})


def test_rayjob_label_and_its_cluster_configs_default() -> None:
    config = ClusterConfiguration(name="c", local_queue="q", max_execution_seconds=90)
    job = build_rayjob("j", "python x.py", "ns", cluster_config=config)
    assert job["metadata"]["labels"][MAX_EXEC_TIME_LABEL] == "90"
    job = build_rayjob("j", "python x.py", "ns", cluster_config=config, max_execution_seconds=5)
    assert job["metadata"]["labels"][MAX_EXEC_TIME_LABEL] == "5"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_bad_values_name_the_field(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="max_execution_seconds"):
        ClusterConfiguration(name="c", max_execution_seconds=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_execution_seconds"):
        build_rayjob(
            "j",
            "x",
            "ns",
            cluster_config=ClusterConfiguration(name="c"),
            max_execution_seconds=bad,  # type: ignore[arg-type]
        )


def test_the_label_is_reserved() -> None:
    with pytest.raises(ConfigurationError, match="use max_execution_seconds"):
        ClusterConfiguration(name="c", labels={MAX_EXEC_TIME_LABEL: "5"})
