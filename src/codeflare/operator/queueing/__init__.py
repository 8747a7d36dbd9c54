"""Queueing and quota admission (MCAD's role, Kueue's API) inside the operator.

``controller`` wires the parts over the shared informers: ``feeder`` (informer events into the
pure :mod:`codeflare.scheduling` engine), ``decisions`` (a cycle's admissions, evictions and
reasons written to Workloads), ``jobsync`` (each queued job suspended, unsuspended and finished
with its Workload; what differs per kind is in ``adapters``, one per kind as Kueue's
GenericJob) and ``reporter`` (ClusterQueue and LocalQueue status, and the resource-in-use
finalizer decided by ``finalizers``). ``convert`` and ``status`` are the pure translations
between manifests and the engine; ``jobs`` holds what every queued job shares (queue,
priority, the Workload manifest).
"""
