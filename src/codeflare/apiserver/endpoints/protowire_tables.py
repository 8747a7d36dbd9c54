"""Protobuf field tables of the kinds kubectl posts as protobuf. GENERATED - do not edit.

Written by scripts/gen_protowire_tables.py: the JSON names and decoding kinds come from its
SPEC, the field numbers from these upstream files (each field's proto type checked):

- k8s.io/api, kubernetes/api 10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2:
  apps/v1/generated.proto
  authentication/v1/generated.proto
  authorization/v1/generated.proto
  batch/v1/generated.proto
  core/v1/generated.proto
  rbac/v1/generated.proto
  scheduling/v1/generated.proto
- k8s.io/apimachinery, kubernetes/apimachinery eed236ceee2c19c2753a3d93ac0631dc20750454:
  pkg/apis/meta/v1/generated.proto
  pkg/runtime/generated.proto

The decoder using them is :mod:`codeflare.apiserver.endpoints.protowire`.
"""

from __future__ import annotations

# field number -> (JSON name, decoding kind); see protowire.py for the kinds
Schema = dict[int, tuple[str, str]]

MESSAGES: dict[str, Schema] = {
    "Unknown": {
        1: ("typeMeta", "TypeMeta"),
        2: ("raw", "bytes"),
        3: ("contentEncoding", "str"),
    },
    "TypeMeta": {
        1: ("apiVersion", "str"),
        2: ("kind", "str"),
    },
    "ObjectMeta": {
        1: ("name", "str"),
        2: ("generateName", "str"),
        3: ("namespace", "str"),
        5: ("uid", "str"),
        6: ("resourceVersion", "str"),
        11: ("labels", "map"),
        12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "strs"),
    },
    "OwnerReference": {
        1: ("kind", "str"),
        3: ("name", "str"),
        4: ("uid", "str"),
        5: ("apiVersion", "str"),
        6: ("controller", "bool!"),
        7: ("blockOwnerDeletion", "bool!"),
    },
    "LabelSelector": {
        1: ("matchLabels", "map"),
        2: ("matchExpressions", "[]LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {
        1: ("key", "str"),
        2: ("operator", "str"),
        3: ("values", "strs"),
    },
    "ResourceAttributes": {
        1: ("namespace", "str"),
        2: ("verb", "str"),
        3: ("group", "str"),
        4: ("version", "str"),
        5: ("resource", "str"),
        6: ("subresource", "str"),
        7: ("name", "str"),
    },
    "NonResourceAttributes": {
        1: ("path", "str"),
        2: ("verb", "str"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
    },
    "SubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
        3: ("user", "str"),
        4: ("groups", "strs"),
        6: ("uid", "str"),
    },
    "SelfSubjectRulesReviewSpec": {
        1: ("namespace", "str"),
    },
    "TokenReviewSpec": {
        1: ("token", "str"),
        2: ("audiences", "strs"),
    },
    "TokenRequestSpec": {
        1: ("audiences", "strs"),
        4: ("expirationSeconds", "int!"),
    },
    "NamespaceSpec": {
        1: ("finalizers", "strs"),
    },
    "ObjectReference": {
        1: ("kind", "str"),
        2: ("namespace", "str"),
        3: ("name", "str"),
        4: ("uid", "str"),
        5: ("apiVersion", "str"),
        6: ("resourceVersion", "str"),
        7: ("fieldPath", "str"),
    },
    "LocalObjectReference": {
        1: ("name", "str"),
    },
    "ResourceQuotaSpec": {
        1: ("hard", "qmap"),
        2: ("scopes", "strs"),
        3: ("scopeSelector", "ScopeSelector"),
    },
    "ScopeSelector": {
        1: ("matchExpressions", "[]ScopedResourceSelectorRequirement"),
    },
    "ScopedResourceSelectorRequirement": {
        1: ("scopeName", "str"),
        2: ("operator", "str"),
        3: ("values", "strs"),
    },
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"),
        2: ("selector", "map"),
        3: ("clusterIP", "str"),
        4: ("type", "str"),
        5: ("externalIPs", "strs"),
        7: ("sessionAffinity", "str"),
        8: ("loadBalancerIP", "str"),
        9: ("loadBalancerSourceRanges", "strs"),
        10: ("externalName", "str"),
        11: ("externalTrafficPolicy", "str"),
        12: ("healthCheckNodePort", "int"),
        13: ("publishNotReadyAddresses", "bool"),
        14: ("sessionAffinityConfig", "reject"),
        18: ("clusterIPs", "strs"),
    },
    "ServicePort": {
        1: ("name", "str"),
        2: ("protocol", "str"),
        3: ("port", "int!"),
        4: ("targetPort", "intstr"),
        5: ("nodePort", "int"),
        6: ("appProtocol", "str"),
    },
    "PodTemplateSpec": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "PodSpec"),
    },
    "PodSpec": {
        1: ("volumes", "reject"),
        2: ("containers", "[]Container"),
        3: ("restartPolicy", "str"),
        4: ("terminationGracePeriodSeconds", "int!"),
        5: ("activeDeadlineSeconds", "int!"),
        6: ("dnsPolicy", "str"),
        7: ("nodeSelector", "map"),
        8: ("serviceAccountName", "str"),
        9: ("serviceAccount", "str"),
        10: ("nodeName", "str"),
        11: ("hostNetwork", "bool"),
        12: ("hostPID", "bool"),
        13: ("hostIPC", "bool"),
        14: ("securityContext", "reject"),
        15: ("imagePullSecrets", "[]LocalObjectReference"),
        16: ("hostname", "str"),
        17: ("subdomain", "str"),
        18: ("affinity", "reject"),
        19: ("schedulerName", "str"),
        20: ("initContainers", "[]Container"),
        21: ("automountServiceAccountToken", "bool!"),
        22: ("tolerations", "reject"),
        23: ("hostAliases", "reject"),
        24: ("priorityClassName", "str"),
        25: ("priority", "int!"),
        26: ("dnsConfig", "reject"),
        27: ("shareProcessNamespace", "bool!"),
        28: ("readinessGates", "reject"),
        29: ("runtimeClassName", "str"),
        30: ("enableServiceLinks", "bool!"),
        31: ("preemptionPolicy", "str"),
        32: ("overhead", "qmap"),
        33: ("topologySpreadConstraints", "reject"),
        34: ("ephemeralContainers", "reject"),
        35: ("setHostnameAsFQDN", "bool!"),
    },
    "Container": {
        1: ("name", "str"),
        2: ("image", "str"),
        3: ("command", "strs"),
        4: ("args", "strs"),
        5: ("workingDir", "str"),
        6: ("ports", "[]ContainerPort"),
        7: ("env", "[]EnvVar"),
        8: ("resources", "ResourceRequirements"),
        9: ("volumeMounts", "reject"),
        10: ("livenessProbe", "reject"),
        11: ("readinessProbe", "reject"),
        12: ("lifecycle", "reject"),
        13: ("terminationMessagePath", "str"),
        14: ("imagePullPolicy", "str"),
        15: ("securityContext", "reject"),
        16: ("stdin", "bool"),
        17: ("stdinOnce", "bool"),
        18: ("tty", "bool"),
        19: ("envFrom", "reject"),
        20: ("terminationMessagePolicy", "str"),
        21: ("volumeDevices", "reject"),
        22: ("startupProbe", "reject"),
    },
    "ContainerPort": {
        1: ("name", "str"),
        2: ("hostPort", "int"),
        3: ("containerPort", "int!"),
        4: ("protocol", "str"),
        5: ("hostIP", "str"),
    },
    "EnvVar": {
        1: ("name", "str"),
        2: ("value", "str"),
        3: ("valueFrom", "reject"),
    },
    "ResourceRequirements": {
        1: ("limits", "qmap"),
        2: ("requests", "qmap"),
        3: ("claims", "reject"),
    },
    "PolicyRule": {
        1: ("verbs", "strs"),
        2: ("apiGroups", "strs"),
        3: ("resources", "strs"),
        4: ("resourceNames", "strs"),
        5: ("nonResourceURLs", "strs"),
    },
    "AggregationRule": {
        1: ("clusterRoleSelectors", "[]LabelSelector"),
    },
    "Subject": {
        1: ("kind", "str"),
        2: ("apiGroup", "str"),
        3: ("name", "str"),
        4: ("namespace", "str"),
    },
    "RoleRef": {
        1: ("apiGroup", "str"),
        2: ("kind", "str"),
        3: ("name", "str"),
    },
    "DeploymentSpec": {
        1: ("replicas", "int!"),
        2: ("selector", "LabelSelector"),
        3: ("template", "PodTemplateSpec"),
        4: ("strategy", "DeploymentStrategy"),
        5: ("minReadySeconds", "int"),
        6: ("revisionHistoryLimit", "int!"),
        7: ("paused", "bool"),
        9: ("progressDeadlineSeconds", "int!"),
    },
    "DeploymentStrategy": {
        1: ("type", "str"),
        2: ("rollingUpdate", "RollingUpdateDeployment"),
    },
    "RollingUpdateDeployment": {
        1: ("maxUnavailable", "intstr"),
        2: ("maxSurge", "intstr"),
    },
    "JobSpec": {
        1: ("parallelism", "int!"),
        2: ("completions", "int!"),
        3: ("activeDeadlineSeconds", "int!"),
        4: ("selector", "LabelSelector"),
        5: ("manualSelector", "bool!"),
        6: ("template", "PodTemplateSpec"),
        7: ("backoffLimit", "int!"),
        8: ("ttlSecondsAfterFinished", "int!"),
        9: ("completionMode", "str"),
        10: ("suspend", "bool!"),
    },
}

# kind -> (apiVersion, top-level schema)
TOP: dict[str, tuple[str, Schema]] = {
    "SelfSubjectAccessReview": (
        "authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SelfSubjectAccessReviewSpec"),
        },
    ),
    "SubjectAccessReview": (
        "authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SubjectAccessReviewSpec"),
        },
    ),
    "LocalSubjectAccessReview": (
        "authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SubjectAccessReviewSpec"),
        },
    ),
    "SelfSubjectRulesReview": (
        "authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "SelfSubjectRulesReviewSpec"),
        },
    ),
    "SelfSubjectReview": (
        "authentication.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
        },
    ),
    "TokenReview": (
        "authentication.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "TokenReviewSpec"),
        },
    ),
    "TokenRequest": (
        "authentication.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "TokenRequestSpec"),
        },
    ),
    "ConfigMap": (
        "v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("data", "map"),
            3: ("binaryData", "bmap"),
            4: ("immutable", "bool!"),
        },
    ),
    "Secret": (
        "v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("data", "bmap"),
            3: ("type", "str"),
            4: ("stringData", "map"),
            5: ("immutable", "bool!"),
        },
    ),
    "Namespace": (
        "v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "NamespaceSpec"),
        },
    ),
    "ServiceAccount": (
        "v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("secrets", "[]ObjectReference"),
            3: ("imagePullSecrets", "[]LocalObjectReference"),
            4: ("automountServiceAccountToken", "bool!"),
        },
    ),
    "ResourceQuota": (
        "v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "ResourceQuotaSpec"),
        },
    ),
    "Service": (
        "v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "ServiceSpec"),
        },
    ),
    "Role": (
        "rbac.authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("rules", "[]PolicyRule"),
        },
    ),
    "ClusterRole": (
        "rbac.authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("rules", "[]PolicyRule"),
            3: ("aggregationRule", "AggregationRule"),
        },
    ),
    "RoleBinding": (
        "rbac.authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("subjects", "[]Subject"),
            3: ("roleRef", "RoleRef"),
        },
    ),
    "ClusterRoleBinding": (
        "rbac.authorization.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("subjects", "[]Subject"),
            3: ("roleRef", "RoleRef"),
        },
    ),
    "PriorityClass": (
        "scheduling.k8s.io/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("value", "int!"),
            3: ("globalDefault", "bool"),
            4: ("description", "str"),
            5: ("preemptionPolicy", "str"),
        },
    ),
    "Deployment": (
        "apps/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "DeploymentSpec"),
        },
    ),
    "Job": (
        "batch/v1",
        {
            1: ("metadata", "ObjectMeta"),
            2: ("spec", "JobSpec"),
        },
    ),
}
