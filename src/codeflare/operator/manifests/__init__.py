"""The operator's identity and RBAC as package data, for installers that have no deploy/ folder.

``rbac.yaml`` is a verbatim copy of deploy/operator/{namespace,service_account,rbac}.yaml and
deploy/visibility/rbac.yaml written by
deploy/operator/generate.py (a test keeps the two identical). Local mode installs these objects and
runs the operator as the ServiceAccount they bind, exactly as a cluster install from deploy/ does.
This module only reads the file; it does not talk to an API server.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

NAMESPACE = "codeflare-system"
SERVICE_ACCOUNT = "codeflare-operator"


def rbac_text() -> str:
    return resources.files(__package__).joinpath("rbac.yaml").read_text()


def rbac_objects() -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding, in that order,
    then the visibility API's Role and RoleBinding in kube-system and its two viewer ClusterRoles."""
    return [doc for doc in yaml.safe_load_all(rbac_text()) if doc]
