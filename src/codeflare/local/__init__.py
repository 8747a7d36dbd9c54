"""codeflare.local: run admitted Ray clusters as real Ray processes on this host.

``node_info`` (host capacity, stdlib only), ``ports`` (host-wide port reservations),
``ray_node`` (the ``ray start`` command, pure), ``processes`` (start/watch/stop by pid and
process group), ``cluster_runner`` (one cluster: readiness, scaling, adoption). The node agent
that maps API objects onto these lives in ``agent``. Importing this package imports nothing.
"""
