"""codeflare.local: the same system on one machine, with Ray clusters as real host processes.

Two parts, kept apart on purpose. :mod:`codeflare.local.agent` is the node agent: it plays kubelet
and KubeRay for one host (registers the Node, runs each RayCluster's Ray nodes as processes,
mirrors them as Pods, runs RayJobs) and talks to the API through :mod:`codeflare.kube` only.
:mod:`codeflare.local.mode` is the local-mode composition root behind ``codeflare local up|down``:
it starts the API server, the operator and the agent as processes of their own and stops them.
Importing this package imports nothing.
"""
