"""``codeflare server`` refuses to serve without the CEL evaluator, saying which extra brings it.

A server that could not evaluate CRD validation rules would accept what a cluster refuses, so it
must not start half-able. The evaluator is hidden from a real ``codeflare server`` process by
marking its module missing, as on an install without ``codeflare[server]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HIDE_CEL_AND_RUN = (
    "import sys; sys.modules['cel'] = None; "
    "from codeflare.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def test_server_without_cel_exits_naming_the_extra(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = subprocess.run(
        [sys.executable, "-c", HIDE_CEL_AND_RUN, "server", "--state-dir", str(state), "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 1, done
    assert "codeflare[server]" in done.stderr
    assert not (state / "kubeconfig").exists()  # it never served
