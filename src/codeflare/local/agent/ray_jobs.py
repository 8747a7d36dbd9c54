"""Ray's Jobs API, as the RayJob runner uses it: submit, ask, read logs, stop (blocking calls).

One ``JobSubmissionClient`` per dashboard URL, made on first use (importing Ray is slow, so it
happens only when a RayJob exists) with the headers ``headers_for`` gives for that URL (the
cluster's token). The RayJob spec's entrypoint fields map onto the submission
as KubeRay maps them. Callers run these in threads; nothing here touches the Kubernetes API.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from codeflare.k8s.types import Obj
from codeflare.local.agent.rayjob_decision import RayJobState


class RayJobsAPI:
    """The Jobs API of every cluster the runner has talked to."""

    def __init__(self, headers_for: Callable[[str], Mapping[str, str]] | None = None) -> None:
        self._clients: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
        self._headers_for = headers_for or (lambda url: {})

    def _client(self, url: str) -> Any:
        headers = dict(self._headers_for(url))
        key = (url, tuple(sorted(headers.items())))
        client = self._clients.get(key)
        if client is None:
            from ray.job_submission import JobSubmissionClient

            client = JobSubmissionClient(url, headers=headers or None)
            self._clients = {k: v for k, v in self._clients.items() if k[0] != url}
            self._clients[key] = client
        return client

    def submit(self, url: str, job: Obj, submission_id: str) -> None:
        spec = job.get("spec") or {}
        runtime_env = yaml.safe_load(spec["runtimeEnvYAML"]) if spec.get("runtimeEnvYAML") else None
        kwargs: dict[str, Any] = {}
        if spec.get("entrypointNumCpus") is not None:
            kwargs["entrypoint_num_cpus"] = float(spec["entrypointNumCpus"])
        if spec.get("entrypointNumGpus") is not None:
            kwargs["entrypoint_num_gpus"] = float(spec["entrypointNumGpus"])
        if spec.get("entrypointResources"):
            kwargs["entrypoint_resources"] = {
                k: float(v) for k, v in yaml.safe_load(spec["entrypointResources"]).items()
            }
        try:
            self._client(url).submit_job(
                entrypoint=spec["entrypoint"],
                submission_id=submission_id,
                runtime_env=runtime_env,
                metadata=dict(spec.get("metadata") or {}),
                **kwargs,
            )
        except RuntimeError as exc:
            # Submitted by an earlier pass whose status write did not land: Ray keeps submission
            # ids unique, so this is the same submission, not a new one.
            if "already exists" not in str(exc):
                raise

    def state(self, url: str, job_id: str) -> RayJobState:
        """The job's state; a failure to ask is reported in ``error``, not raised."""
        try:
            info = self._client(url).get_job_info(job_id)
        except Exception as exc:
            return RayJobState(error=f"{type(exc).__name__}: {exc}")
        status = info.status.value if hasattr(info.status, "value") else info.status
        return RayJobState(status=str(status), message=str(info.message or ""))

    def logs(self, url: str, job_id: str) -> str:
        text: str = self._client(url).get_job_logs(job_id)
        return text

    def stop(self, url: str, job_id: str) -> None:
        with contextlib.suppress(Exception):
            self._client(url).stop_job(job_id)
