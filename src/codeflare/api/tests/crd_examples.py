"""Example objects of every bundled CRD, as users and controllers write them (test data).

``test_crds.py`` checks that each uses only declared fields and passes the API server's validator;
edit these when a CRD changes what users may write. Data only: no assertions here.
"""

from __future__ import annotations

from typing import Any

from codeflare.api.kueue_conversion import to_v1beta1

POD_TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "ray"}},
    "spec": {
        "containers": [
            {
                "name": "ray",
                "image": "quay.io/modh/ray:2.35.0-py311-cu121",
                "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"nvidia.com/gpu": 1}},
            }
        ]
    },
}

RAY_CLUSTER_SPEC = {
    "rayVersion": "2.35.0",
    "enableInTreeAutoscaling": False,
    "suspend": True,
    "headServiceAnnotations": {"example.com/owner": "team-a"},
    "headGroupSpec": {
        "rayStartParams": {"dashboard-host": "0.0.0.0", "num-gpus": "0"},
        "serviceType": "ClusterIP",
        "enableIngress": False,
        "template": POD_TEMPLATE,
    },
    "workerGroupSpecs": [
        {
            "groupName": "small-group",
            "replicas": 2,
            "minReplicas": 2,
            "maxReplicas": 2,
            "numOfHosts": 1,
            "rayStartParams": {"block": "true"},
            "template": POD_TEMPLATE,
            "scaleStrategy": {"workersToDelete": []},
        }
    ],
}

RAY_CLUSTER = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "raytest", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    "spec": RAY_CLUSTER_SPEC,
    "status": {
        "state": "ready",
        "readyWorkerReplicas": 2,
        "availableWorkerReplicas": 2,
        "desiredWorkerReplicas": 2,
        "desiredCPU": "3",
        "desiredMemory": "6Gi",
        "desiredGPU": 3,
        "endpoints": {"dashboard": "8265", "client": "10001", "gcs-server": "6379"},
        "head": {"podIP": "10.0.0.5", "serviceIP": "10.96.0.12"},
        "conditions": [
            {
                "type": "HeadPodReady",
                "status": "True",
                "reason": "HeadPodRunningAndReady",
                "message": "",
                "lastTransitionTime": "2026-11-30T10:00:00Z",
            }
        ],
    },
}

RAY_JOB = {
    "apiVersion": "ray.io/v1",
    "kind": "RayJob",
    "metadata": {"name": "train", "namespace": "team-a"},
    "spec": {
        "entrypoint": "python train.py",
        "runtimeEnvYAML": "pip: [torch]\n",
        "metadata": {"owner": "alice"},
        "rayClusterSpec": RAY_CLUSTER_SPEC,
        "submissionMode": "K8sJobMode",
        "shutdownAfterJobFinishes": True,
        "ttlSecondsAfterFinished": 60,
        "activeDeadlineSeconds": 3600,
        "backoffLimit": 1,
        "entrypointNumCpus": 0.5,
        "entrypointNumGpus": 1,
        "entrypointResources": '{"custom": 1}',
        "suspend": True,
    },
    "status": {
        "jobId": "train-abc12",
        "rayClusterName": "train-raycluster-x7k2p",
        "dashboardURL": "train-head-svc.team-a.svc:8265",
        "jobStatus": "RUNNING",
        "jobDeploymentStatus": "Running",
        "startTime": "2026-11-30T10:00:00Z",
        "rayClusterStatus": {"state": "ready", "desiredWorkerReplicas": 2},
    },
}

APP_WRAPPER = {
    "apiVersion": "workload.codeflare.dev/v1beta2",
    "kind": "AppWrapper",
    "metadata": {"name": "wrapped", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    "spec": {
        "suspend": True,
        "components": [
            {
                "annotations": {"workload.codeflare.dev.appwrapper/note": "ray"},
                "podSets": [
                    {"path": "template.spec.headGroupSpec.template", "replicas": 1},
                    {"path": "template.spec.workerGroupSpecs[0].template", "replicas": 2},
                ],
                "podSetInfos": [
                    {
                        "nodeSelector": {"instance-type": "gpu"},
                        "tolerations": [{"key": "gpu", "operator": "Exists"}],
                    },
                    {"labels": {"x": "y"}, "annotations": {"a": "b"}},
                ],
                "template": {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayCluster",
                    "metadata": {"name": "raytest"},
                    "spec": RAY_CLUSTER_SPEC,
                },
            }
        ],
    },
    "status": {
        "phase": "Running",
        "resettingCount": 0,
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "AppWrapperRunnable",
                "message": "",
                "lastTransitionTime": "2026-11-30T10:00:00Z",
                "observedGeneration": 1,
            }
        ],
        "componentStatus": [
            {
                "name": "raytest",
                "kind": "RayCluster",
                "apiVersion": "ray.io/v1",
                "podSets": [{"path": "template.spec.headGroupSpec.template", "replicas": 1}],
            }
        ],
    },
}

RESOURCE_FLAVOR = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ResourceFlavor",
    "metadata": {"name": "gpu-a100"},
    "spec": {
        "nodeLabels": {"instance-type": "a100"},
        "nodeTaints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
        "tolerations": [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
    },
}

CLUSTER_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "ClusterQueue",
    "metadata": {"name": "team-a-cq"},
    "spec": {
        "cohortName": "research",
        "queueingStrategy": "StrictFIFO",
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "gpu-a100",
                        "resources": [
                            {"name": "cpu", "nominalQuota": 32},
                            {"name": "memory", "nominalQuota": "256Gi", "borrowingLimit": "64Gi"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 4, "lendingLimit": 2},
                        ],
                    },
                    {
                        "name": "default-flavor",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "8"},
                            {"name": "memory", "nominalQuota": "32Gi"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 0},
                        ],
                    },
                ],
            }
        ],
        "preemption": {
            "withinClusterQueue": "LowerPriority",
            "reclaimWithinCohort": "Any",
            "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
        },
        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"},
        "stopPolicy": "None",
        "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
    },
    "status": {
        "pendingWorkloads": 1,
        "reservingWorkloads": 2,
        "admittedWorkloads": 2,
        "flavorsUsage": [{"name": "gpu-a100", "resources": [{"name": "cpu", "total": "4", "borrowed": 0}]}],
        "flavorsReservation": [
            {"name": "gpu-a100", "resources": [{"name": "cpu", "total": "4", "borrowed": 0}]}
        ],
    },
}

LOCAL_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "LocalQueue",
    "metadata": {
        "name": "team-a",
        "namespace": "team-a",
        "annotations": {"kueue.x-k8s.io/default-queue": "true"},
    },
    "spec": {"clusterQueue": "team-a-cq", "fairSharing": {"weight": "2"}},
    "status": {
        "pendingWorkloads": 0,
        "admittedWorkloads": 1,
        "flavorsUsage": [{"name": "gpu-a100", "resources": [{"name": "cpu", "total": "4"}]}],
        "fairSharing": {
            "weightedShare": 0,
            "admissionFairSharingStatus": {
                "consumedResources": {"cpu": "31999m"},
                "lastUpdate": "2025-06-03T14:25:15Z",
            },
        },
    },
}

WORKLOAD = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "Workload",
    "metadata": {"name": "raycluster-raytest-1a2b3", "namespace": "team-a"},
    "spec": {
        "queueName": "team-a",
        "priority": 100,
        "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
        "active": True,
        "podSets": [
            {"name": "head", "count": 1, "template": POD_TEMPLATE},
            {"name": "small-group", "count": 2, "minCount": 1, "template": POD_TEMPLATE},
        ],
    },
    "status": {
        "admission": {
            "clusterQueue": "team-a-cq",
            "podSetAssignments": [
                {
                    "name": "head",
                    "flavors": {"cpu": "gpu-a100", "memory": "gpu-a100"},
                    "resourceUsage": {"cpu": "1", "memory": "2Gi"},
                    "count": 1,
                }
            ],
        },
        "requeueState": {"count": 1, "requeueAt": "2026-11-30T10:05:00Z"},
        "conditions": [
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "The workload is admitted",
                "lastTransitionTime": "2026-11-30T10:00:00Z",
            }
        ],
    },
}

PRIORITY_CLASS = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "WorkloadPriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
    "description": "Production training",
}

EXAMPLES = [
    RAY_CLUSTER,
    RAY_JOB,
    APP_WRAPPER,
    RESOURCE_FLAVOR,
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    WORKLOAD,
    PRIORITY_CLASS,
    # the same Kueue objects as a v1beta1 client sees them (Kueue's conversion)
    *(to_v1beta1(obj) for obj in (RESOURCE_FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, WORKLOAD, PRIORITY_CLASS)),
]
