"""Typed builders of every resource the SDK and the CLI create, checked before they leave.

``codeflare.api`` turns typed descriptions into manifests: RayClusters (:mod:`raycluster`),
RayJobs (:mod:`rayjob`), AppWrappers around them (:mod:`appwrapper`), Kueue's flavors, queues and
priority classes (:mod:`kueue`), the per-cluster mTLS CA (:mod:`mtls`), and the CRDs we ship
(:mod:`crds`, ``crds/*.yaml``). Every manifest is validated client-side against those CRDs
(:mod:`validation`) so a mistake is reported with its field before any API call. It sits above
``codeflare.k8s`` (quantities, names, schema, certificates) and below the SDK, the operator and
the node agent; it does no I/O and never imports the SDK, the client layer or the API server.
"""
