"""The names the node agent writes on API objects, defined once for every unit of the agent.

Annotations on RayClusters (the processes' state, the dashboard URL) and Pods (the Ray node's
pid), the finalizer that holds a RayCluster until its processes are stopped, and the field
manager of the agent's server-side applies. Values only; nothing here reads or writes the API.
"""

from __future__ import annotations

FINALIZER = "local.codeflare.dev/ray-processes"
#: JSON of :meth:`LocalRayCluster.to_state`: what a restarted agent re-adopts.
STATE_ANNOTATION = "local.codeflare.dev/processes"
DASHBOARD_ANNOTATION = "local.codeflare.dev/dashboard-url"
PID_ANNOTATION = "local.codeflare.dev/pid"
FIELD_MANAGER = "codeflare-local-agent"
LEASE_NAMESPACE = "kube-node-lease"
