"""Queueing and quota admission (MCAD's role, Kueue's API) inside the operator.

``controller`` wires the parts over the shared informers: ``feeder`` (informer events into the
pure :mod:`codeflare.scheduling` engine), ``decisions`` (a cycle's admissions, evictions and
reasons written to Workloads), ``jobsync`` (each queued job suspended, unsuspended and finished
with its Workload; the per-kind details in ``jobs``) and ``reporter`` (ClusterQueue and LocalQueue
status). ``convert`` and ``status`` are the pure translations between manifests and the engine.
"""
