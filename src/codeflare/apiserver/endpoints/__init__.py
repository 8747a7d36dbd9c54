"""The HTTP face of the API server: what goes over the wire and how it is spelled.

Routing of Kubernetes REST paths into request attributes, content negotiation, request bodies
(JSON, YAML, the protobuf kubectl sends), response rendering (objects, lists, Tables, watch
streams, ``Status`` errors), discovery documents and OpenAPI. Endpoints call the security layer
(authenticate, authorize, admit) and the registry (the object operations); they keep no state of
their own beyond open watches, and no object semantics live here.
"""
