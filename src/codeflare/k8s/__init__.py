"""Kubernetes primitives, each written once: the leaf layer every other package may import.

Quantities, RFC 3339 timestamps, metav1 conditions, owner references, name and label rules,
shared label/annotation keys, private-file writes, the controllers' work queue (and, from the API
server's side, the structural schema engine and certificate minting) live here because every
layer above needs them and none of them needs anything above. Modules here import the standard
library and third-party packages only, never another ``codeflare`` package; that rule is checked
by the import contract in ``pyproject.toml``. This package itself imports nothing, so
``import codeflare.k8s.quantity`` costs only what that module needs.
"""
