"""Local mode's composition root: ``codeflare local up|down|status``.

It starts the embedded API server, the operator and the node agent as processes of their own,
bootstraps the objects they need, and stops exactly what it started (``control_plane``,
``components``, ``bootstrap``); ``operator_identity`` gives the operator its ServiceAccount's
credentials. Being the root, it may import every layer; nothing but the CLI imports it.
"""

from codeflare.local.mode.control_plane import LocalMode

__all__ = ["LocalMode"]
