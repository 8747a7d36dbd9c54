"""The CodeFlare operator: one process embedding every controller, on shared informers.

Controllers: :mod:`queueing` (Kueue-shaped quota admission through ``codeflare.scheduling``),
:mod:`appwrapper` (the AppWrapper lifecycle with fault tolerance), :mod:`raycluster` (dashboard
exposure, network policies, mTLS, OAuth), :mod:`scaleout` (node groups grow for capacity-pending
workloads) and :mod:`webhooks` (admission rules). Around them: the typed configuration
(:mod:`config`, loaded by :mod:`config_loader`), leader election (:mod:`leader`), probes,
metrics, Events, and :mod:`main`, which starts it all. Each controller decides with pure
functions and acts through ``codeflare.kube``; it never imports the API server, the node agent
or the SDK (the layer contract in ``pyproject.toml`` checks this).
"""
