"""A RayCluster-shaped schema and object shared by the schema engine's tests."""

from __future__ import annotations

from typing import Any

from codeflare.k8s.schema.field import FieldError

RAYCLUSTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["headGroupSpec"],
            "properties": {
                "rayVersion": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
                "suspend": {"type": "boolean"},
                "enableInTreeAutoscaling": {"type": "boolean", "default": False},
                "headGroupSpec": {
                    "type": "object",
                    "properties": {
                        "serviceType": {"type": "string", "enum": ["ClusterIP", "NodePort", "LoadBalancer"]},
                        "rayStartParams": {"type": "object", "additionalProperties": {"type": "string"}},
                        "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                },
                "workerGroupSpecs": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["groupName"],
                    "items": {
                        "type": "object",
                        "required": ["groupName"],
                        "properties": {
                            "groupName": {"type": "string", "maxLength": 63},
                            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "default": 0},
                            "minReplicas": {"type": "integer", "minimum": 0},
                            "maxReplicas": {"type": "integer", "maximum": 1000},
                            "numOfHosts": {"type": "integer", "default": 1},
                            "rayStartParams": {"type": "object", "additionalProperties": {"type": "string"}},
                            "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "scaleStrategy": {
                                "type": "object",
                                "properties": {
                                    "workersToDelete": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "set",
                                        "items": {"type": "string"},
                                    }
                                },
                            },
                        },
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "state": {"type": "string"},
                "endpoints": {"type": "object", "additionalProperties": {"type": "string"}},
                "lastUpdateTime": {"type": "string", "format": "date-time", "nullable": True},
            },
        },
    },
}


def raycluster() -> dict[str, Any]:
    container = {
        "name": "ray-worker",
        "image": "quay.io/rhoai/ray:2.35.0-py311-cu121",
        "resources": {"limits": {"cpu": "2", "memory": "8G"}, "requests": {"cpu": "2", "memory": "8G"}},
        "env": [{"name": "RAY_USAGE_STATS_ENABLED", "value": "0"}],
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "demo", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "rayVersion": "2.35.0",
            "suspend": False,
            "headGroupSpec": {
                "serviceType": "ClusterIP",
                "rayStartParams": {"dashboard-host": "0.0.0.0", "block": "true"},
                "template": {"spec": {"containers": [dict(container, name="ray-head")]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": f"group-{i}",
                    "replicas": 2,
                    "minReplicas": 1,
                    "maxReplicas": 4,
                    "numOfHosts": 1,
                    "rayStartParams": {"num-cpus": "2"},
                    "template": {"spec": {"containers": [container]}},
                }
                for i in range(2)
            ],
        },
    }


def messages(errs: list[FieldError]) -> list[str]:
    return [e.message() for e in errs]
