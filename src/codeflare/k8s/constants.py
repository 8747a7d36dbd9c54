"""Label, annotation and finalizer keys shared across packages, each defined once.

Keys are the contract between components that never import each other: the SDK labels a
RayCluster with its queue, the operator reads that label, the node agent annotates pods the SDK
reads back. Writing a key in one place means a typo cannot make two components disagree. Keys used
by a single module only may stay there; values and semantics are documented next to each key.
"""

from __future__ import annotations

# -- Kueue (kueue.x-k8s.io) ------------------------------------------------------------------------
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
"""On a job: the LocalQueue it is queued in."""
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
"""On a job: the WorkloadPriorityClass of its Workload."""
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
"""On a Workload: the uid of the job it was created for."""
DEFAULT_QUEUE_ANNOTATION = "kueue.x-k8s.io/default-queue"
"""On a LocalQueue, value "true": the namespace's default queue."""
WORKLOAD_PRIORITY_CLASS_SOURCE = "kueue.x-k8s.io/workloadpriorityclass"
"""Workload ``spec.priorityClassSource`` when the priority came from a WorkloadPriorityClass."""
POD_PRIORITY_CLASS_SOURCE = "scheduling.k8s.io/priorityclass"
"""Workload ``spec.priorityClassSource`` when the priority came from a pod PriorityClass."""
RESOURCE_IN_USE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
"""On a ClusterQueue (while it has admitted workloads) or a ResourceFlavor (while a ClusterQueue
names it): deletion waits until nothing uses it."""
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
"""On a job: its Workload's ``spec.maximumExecutionTimeSeconds`` (a positive integer; Kueue's
pkg/controller/constants, read by jobframework when it builds the Workload)."""

# -- AppWrapper (workload.codeflare.dev) ------------------------------------------------------------
APPWRAPPER_LABEL = "workload.codeflare.dev/appwrapper"
"""On every object an AppWrapper created (and its pods): the AppWrapper's name."""
APPWRAPPER_FINALIZER = "workload.codeflare.dev/finalizer"
"""On an AppWrapper: its components are still being deleted."""
APPWRAPPER_USER_LABEL = "workload.codeflare.dev/user"
"""On an AppWrapper, set by the webhook: the (label-safe) name of the user who created it."""
APPWRAPPER_USER_ID_LABEL = "workload.codeflare.dev/userid"
"""On an AppWrapper, set by the webhook: the uid of the user who created it."""
APPWRAPPER_CONTROLLER = "workload.codeflare.dev/appwrapper-controller"
"""AppWrapper ``spec.managedBy`` value of our controller (other values: someone else's)."""
APPWRAPPER_ANNOTATION_PREFIX = "workload.codeflare.dev.appwrapper/"
"""Prefix of the per-AppWrapper fault-tolerance overrides (``<prefix><knob>``)."""

# -- KubeRay (ray.io) -----------------------------------------------------------------------------
RAY_CLUSTER_LABEL = "ray.io/cluster"
"""On a Ray pod, service or child object: the RayCluster's name (also a RayJob clusterSelector key)."""
RAY_NODE_TYPE_LABEL = "ray.io/node-type"
"""On a Ray pod: "head" or "worker"."""
RAY_GROUP_LABEL = "ray.io/group"
"""On a Ray pod: its worker group ("headgroup" for the head)."""
RAY_ORIGINATED_FROM_CRD_LABEL = "ray.io/originated-from-crd"
"""On a RayCluster created for a RayJob: "RayJob"."""
RAY_ORIGINATED_FROM_CR_NAME_LABEL = "ray.io/originated-from-cr-name"
"""On a RayCluster or submitter created for a RayJob: the RayJob's name."""

# -- CodeFlare (codeflare.dev) --------------------------------------------------------------------
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
"""Standard label; our operator writes the value :data:`OPERATOR_NAME`."""
OPERATOR_NAME = "codeflare-operator"
"""The operator's name: managed-by value, default leader-election lease, field manager."""
RESERVED_FOR_ANNOTATION = "codeflare.dev/reserved-for"
"""On a Node brought up by scale-out: the workload it is reserved for until admitted."""
SCALE_OUT_REQUESTS_ANNOTATION = "codeflare.dev/scale-out-requests"
"""On a node group (MachineSet/MachineDeployment): the scale-out requests it carries."""
CAPACITY_SHORTFALLS_ANNOTATION = "codeflare.dev/capacity-shortfalls"
"""On a Workload pending only on node capacity: the engine's shortfalls as JSON records
(``codeflare.scheduling.encode_shortfalls``), what scale-out acts on; absent otherwise."""
RAYCLUSTER_FINALIZER = "codeflare.dev/raycluster-cluster-scoped-children"
"""On a RayCluster: cluster-scoped children (which owner references cannot reach) still exist."""
LOOPBACK_PORT_ANNOTATION = "codeflare.dev/loopback-port"
"""Embedded API server: the port on which a webhook or aggregated API listens on loopback."""
LOCAL_AGENT_LABEL = "codeflare.dev/local-agent"
"""On the Node the local node agent registers: "true"."""

# -- local node agent (local.codeflare.dev) ---------------------------------------------------------
LOCAL_FINALIZER = "local.codeflare.dev/ray-processes"
"""On a RayCluster the agent runs: its Ray processes are still to be stopped."""
LOCAL_PROCESSES_ANNOTATION = "local.codeflare.dev/processes"
"""On a RayCluster the agent runs: the processes it started (so a restart can adopt them)."""
DASHBOARD_URL_ANNOTATION = "local.codeflare.dev/dashboard-url"
"""On a RayCluster the agent runs: where its Ray dashboard answers on this host."""
LOCAL_PID_ANNOTATION = "local.codeflare.dev/pid"
"""On a pod the agent represents: the pid of its Ray process."""
ESTIMATED_START_ANNOTATION = "codeflare.dev/estimated-start"
"""On a pending Workload, written by the operator's forecast: its estimated admission (RFC 3339),
or :data:`ESTIMATE_UNBOUNDED` when what it waits for has no known end. Stale once admitted."""
ESTIMATE_UNBOUNDED = "unbounded"
"""The :data:`ESTIMATED_START_ANNOTATION` value meaning "no bound"."""
WAITING_FOR_ANNOTATION = "codeflare.dev/waiting-for"
"""On a pending Workload, with the estimate: the workloads that must finish first, in words
(names in the Workload's own namespace; others only counted)."""

# -- Kueue conventions (appended) ---------------------------------------------------------------
DEFAULT_LOCAL_QUEUE_NAME = "default"
"""A LocalQueue of this name is its namespace's default queue (Kueue >= 0.17,
pkg/controller/constants.DefaultLocalQueueName); :data:`DEFAULT_QUEUE_ANNOTATION` wins over it."""
