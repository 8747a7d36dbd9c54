"""``codeflare dashboard`` as a process: bad arguments, and a token required off loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.dashboard.harness import DashboardProcess
from tests.support.apiserver import ServerProcess


def test_a_missing_kubeconfig_is_a_usage_error_naming_the_flag(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.kubeconfig"
    result = subprocess.run(
        [sys.executable, "-m", "codeflare.cli.main", "dashboard", "--kubeconfig", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "--kubeconfig" in result.stderr


def test_bound_off_loopback_it_prints_a_token_url_and_refuses_requests_without_it(
    apiserver: ServerProcess, tmp_path: Path
) -> None:
    dashboard = DashboardProcess(apiserver.kubeconfig, tmp_path, ["--host", "0.0.0.0"]).start()
    try:
        url = dashboard.url
        assert "?token=" in url and f"dashboard: {url}" in dashboard.log()
        base, token = url.split("?token=")
        plain = base.replace("0.0.0.0", "127.0.0.1")
        assert httpx.get(plain).status_code == 401
        assert httpx.get(plain, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        secret = apiserver.token
        page = httpx.get(plain, headers={"Authorization": f"Bearer {token}"}).text
        assert secret not in page  # the user's Kubernetes credential never reaches the browser
    finally:
        dashboard.stop()
