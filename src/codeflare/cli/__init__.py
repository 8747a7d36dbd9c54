"""The ``codeflare`` command: argument parsing and terminal output over the SDK and the servers.

:mod:`main` dispatches to one module per command group (``cluster``, ``job``, ``queue``,
``operator``, ``server``, ``local``, ``demo``); :mod:`output` formats tables and progress. The
commands hold no logic of their own beyond presenting results and exit codes: clusters, jobs
and queues go through ``codeflare.sdk``, ``operator``/``server``/``local`` start the components.
It is the top layer and may import anything; nothing imports it.
"""
