"""The one Kubernetes client layer: connection, kinds, errors and retries, discovery, informers.

Everything of ours that talks to a Kubernetes API (the SDK, the operator, the local agent) goes
through here, so credentials, error types, retries and conflict handling are the same everywhere.
It imports only ``codeflare.k8s`` and ``codeflare.errors``; the API server it may talk to is
never imported (the layer contract).
"""
