"""The local node agent: one host's kubelet and KubeRay, with Ray nodes as host processes.

Units, lowest first: ``node_info`` (host capacity, standard library only), ``identity`` (which
process a pid is, without the wall clock), ``processes`` (start, watch, stop by pid and process
group), ``ports``, ``ray_node`` (the ``ray start`` command), ``cluster_runner`` (one Ray cluster's
processes), ``shapes`` (RayCluster/Pod objects, pure); then the API-facing units, each alone:
``node`` (Node registration and heartbeat), ``raycluster`` (RayCluster runner), ``pods`` (the Pod
mirror), ``rayjob`` (RayJob runner, deciding in ``rayjob_decision``); ``node_agent`` runs them.
It imports only :mod:`codeflare.k8s`, :mod:`codeflare.kube` and :mod:`codeflare.api`, never the
operator or the API server. Importing this package imports nothing.
"""
