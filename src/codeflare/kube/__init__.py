"""The one Kubernetes client layer: connection, kinds, error mapping, retries and informers.

Everything of ours that talks to a Kubernetes API (the SDK, the operator, the local agent) goes
through here, so credentials, error types and conflict handling are the same everywhere.
"""
