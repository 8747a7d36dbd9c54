"""Kubernetes object semantics, per resource, independent of HTTP.

The registry knows which resources exist (:mod:`resources`), what each kind requires and
defaults (:mod:`strategies`), how metadata evolves, how patches and server-side apply merge,
which lists merge by key (:mod:`list_semantics`), how selectors match, how watches fan out and
how owner references are garbage-collected. It reads and writes through :mod:`codeflare.apiserver.storage`
and never imports :mod:`codeflare.apiserver.endpoints` or :mod:`codeflare.apiserver.security`:
in-process callers (garbage collection, namespace finalization) use it exactly as requests do.
"""
