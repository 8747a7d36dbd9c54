"""The embedded Kubernetes-compatible API server, laid out in the layers of ``k8s.io/apiserver``.

Real clients (kubectl, the ``kubernetes`` client, lightkube, kopf) talk to it as to a cluster;
local mode and the test suite run the whole stack against it. A request travels down the layers:

- :mod:`~codeflare.apiserver.endpoints`: HTTP - routing, content types, bodies (JSON, YAML,
  protobuf), Tables, watch streams, discovery and OpenAPI, errors rendered as ``Status``;
- :mod:`~codeflare.apiserver.security`: who is asking and may they - bearer tokens and service
  accounts, RBAC and the review endpoints, admission (built-in checks and webhooks);
- :mod:`~codeflare.apiserver.registry`: Kubernetes object semantics - per-resource strategies,
  metadata, patches and server-side apply, selectors, watch fan-out, garbage collection;
- :mod:`~codeflare.apiserver.storage`: the SQLite store with resourceVersions and change feed.

:mod:`~codeflare.apiserver.server` composes them into :class:`~codeflare.apiserver.server.ApiServer`.
:mod:`~codeflare.apiserver.errors` and :mod:`~codeflare.apiserver.context` are the vocabulary every
layer shares. Layer rule: endpoints -> security -> registry -> storage, never upwards; nothing here
imports ``codeflare`` outside this package and ``codeflare.k8s``, and nothing here is an API client.
"""
