"""SDK benchmark: import cost and installed size against codeflare-sdk, and API requests per call.

One command (``python -m benchmarks.sdk_bench``) measures, in the same run:

- ``python -c "import codeflare"`` wall time (median of 5 fresh processes) and peak RSS, beside
  ``import codeflare_sdk`` (codeflare-sdk 0.40.1 in its own venv under /tmp, installed on first
  run and reused); also ``import codeflare.sdk`` (what the first SDK call loads);
- the installed size of ``pip install <repo>`` without the ``local`` extra (a fresh venv's
  site-packages minus a bare venv's), beside codeflare-sdk's measured the same way;
- how many HTTP requests ``Cluster.status()``, ``Cluster.apply()``, ``list_all_queued()`` and
  friends send, counted by a small aiohttp reverse proxy (plain HTTP from the SDK, HTTPS to a
  ``codeflare server`` process) that lives in this file only.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OTHER = Path("/tmp/cf-sdk-bench")  # codeflare-sdk's venv, outside the repo
OTHER_VERSION = "0.40.1"
RUNS = 5

CHILD = (
    "import resource, sys, time\n"
    "t = time.perf_counter()\n"
    "import {module}\n"
    "imported = time.perf_counter() - t\n"
    "print(imported, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


# -- import cost --------------------------------------------------------------------------------
def import_cost(python: Path, module: str, runs: int = RUNS) -> dict[str, float]:
    """Median wall time of ``python -c "import module"`` (whole process), in-process import time,
    and peak RSS, over ``runs`` fresh processes."""
    walls, imports, rss = [], [], []
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run([str(python), "-c", CHILD.format(module=module)], capture_output=True,
                             text=True, check=True, env=env, cwd=tempfile.gettempdir())
        walls.append(time.perf_counter() - start)
        imported, maxrss = out.stdout.split()
        imports.append(float(imported))
        rss.append(int(maxrss) / 1024)
    return {"wall_s": statistics.median(walls), "import_s": statistics.median(imports),
            "rss_mib": statistics.median(rss)}


# -- installed size -----------------------------------------------------------------------------
def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def du_bytes(path: Path) -> int:
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    return path / "bin" / "python"


def pip_install(python: Path, *what: str) -> tuple[bool, str]:
    out = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *what],
                         capture_output=True, text=True, check=False)
    return out.returncode == 0, (out.stdout + out.stderr)[-2000:]


def other_sdk() -> tuple[Path | None, str]:
    """codeflare-sdk's venv (created on first use); (python, "") or (None, why it failed)."""
    python = OTHER / "venv" / "bin" / "python"
    check = [str(python), "-c", "import importlib.metadata as m; print(m.version('codeflare-sdk'))"]
    found = subprocess.run(check, capture_output=True, text=True).stdout.strip() if python.exists() else ""
    if found == OTHER_VERSION:
        return python, ""
    shutil.rmtree(OTHER / "venv", ignore_errors=True)
    OTHER.mkdir(parents=True, exist_ok=True)
    python = make_venv(OTHER / "venv")
    ok, log = pip_install(python, f"codeflare-sdk=={OTHER_VERSION}")
    return (python, "") if ok else (None, log)


def installed_sizes(other_python: Path | None) -> dict[str, float | str]:
    """MB (10^6 bytes) that each package adds to a fresh venv's site-packages."""
    with tempfile.TemporaryDirectory(prefix="sdk-bench-size-") as tmp:
        bare = Path(tmp) / "bare"
        make_venv(bare)
        baseline = du_bytes(site_packages(bare))
        ours = Path(tmp) / "ours"
        python = make_venv(ours)
        ok, log = pip_install(python, str(REPO))
        result: dict[str, float | str] = {}
        if ok:
            result["ours_mb"] = (du_bytes(site_packages(ours)) - baseline) / 1e6
        else:
            result["ours_error"] = log
        if other_python is not None:
            result["other_mb"] = (du_bytes(site_packages(other_python.parents[1])) - baseline) / 1e6
        return result


# -- request counting ---------------------------------------------------------------------------
class CountingProxy:
    """Plain-HTTP reverse proxy to the API server that counts every request it forwards."""

    def __init__(self, upstream: str, ca_file: Path) -> None:
        self.upstream = upstream
        self.ca_file = ca_file
        self.requests: list[tuple[str, str]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> CountingProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        import aiohttp
        from aiohttp import web

        context = ssl.create_default_context(cafile=str(self.ca_file))
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context))
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    async def _forward(self, request: Any) -> Any:
        from aiohttp import web

        self.requests.append((request.method, request.path_qs))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with self._session.request(request.method, self.upstream + request.path_qs, headers=headers,
                                         data=await request.read()) as upstream:
            body = await upstream.read()
            hop = ("content-length", "transfer-encoding", "content-encoding", "connection")
            keep = {k: v for k, v in upstream.headers.items() if k.lower() not in hop}
            return web.Response(status=upstream.status, body=body, headers=keep)

    def count(self, call: Callable[[], Any]) -> tuple[int, list[str]]:
        self.requests.clear()
        call()
        seen = [f"{method} {path.split('?')[0]}" for method, path in self.requests]
        return len(seen), seen

    def stop(self) -> None:
        async def close() -> None:
            await self._session.close()
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def request_counts() -> list[tuple[str, int, list[str]]]:
    """Requests per SDK call against a real server with the CRDs, a queue and three clusters."""
    from codeflare.api.crds import load_crds
    from codeflare.kube import errors, kinds
    from codeflare.sdk import (
        Cluster,
        ClusterConfiguration,
        FlavorQuota,
        TokenAuthentication,
        create_cluster_queue,
        create_local_queue,
        list_all_clusters,
        list_all_queued,
        list_local_queues,
    )

    with tempfile.TemporaryDirectory(prefix="sdk-bench-server-") as tmp:
        state = Path(tmp)
        port = _free_port()
        server = subprocess.Popen([sys.executable, "-m", "codeflare.cli.main", "server", "--state-dir",
                                   str(state), "--port", str(port)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        proxy: CountingProxy | None = None
        try:
            deadline = time.monotonic() + 30
            while not (state / "kubeconfig").exists():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the API server did not start")
                time.sleep(0.05)
            proxy = CountingProxy(f"https://127.0.0.1:{port}", state / "ca.crt").start()
            token = (state / "admin.token").read_text().strip()
            client = TokenAuthentication(token, f"http://127.0.0.1:{proxy.port}").login()
            for crd in load_crds():
                client.kube.create(kinds.CRD, crd)
            with contextlib.suppress(errors.AlreadyExists):
                client.kube.create(kinds.NAMESPACE, {"metadata": {"name": "default"}})
            create_cluster_queue("cq", [FlavorQuota("default-flavor", {"cpu": "4", "memory": "8Gi"})],
                                 namespace_selector={}, client=client)
            create_local_queue("lq", "cq", "default", default=True, client=client)

            def config(name: str) -> ClusterConfiguration:
                return ClusterConfiguration(name, namespace="default", num_workers=1, head_cpu_requests=1,
                                            head_cpu_limits=1, head_memory_requests="1Gi",
                                            head_memory_limits="1Gi", worker_memory_requests="1Gi",
                                            worker_memory_limits="1Gi")

            holder: dict[str, Cluster] = {}
            rows: list[tuple[str, int, list[str]]] = []

            def measure(label: str, call: Callable[[], Any]) -> None:
                assert proxy is not None
                count, seen = proxy.count(call)
                rows.append((label, count, seen))

            measure("Cluster(config) (default-queue lookup)",
                    lambda: holder.setdefault("c", Cluster(config("a"), client)))
            cluster = holder["c"]
            measure("apply() (new cluster)", cluster.apply)
            measure("apply() (again, unchanged)", cluster.apply)
            measure("status()", cluster.status)
            measure("why_pending()", cluster.why_pending)
            for name in ("b", "c"):
                Cluster(config(name), client).apply()
            measure("list_all_queued() (3 clusters)", lambda: list_all_queued("default", client))
            measure("list_local_queues()", lambda: list_local_queues("default", client))
            measure("list_all_clusters() (3 clusters)", lambda: list_all_clusters("default", client))
            client.close()
            return rows
        finally:
            if proxy is not None:
                proxy.stop()
            server.terminate()
            server.wait(10)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- report -------------------------------------------------------------------------------------
def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def report(imports: dict[str, dict[str, float]], other_error: str, sizes: dict[str, float | str],
           requests: list[tuple[str, int, list[str]]]) -> str:
    ours, sdk = imports["codeflare"], imports["codeflare.sdk"]
    other = imports.get("codeflare_sdk")
    lines = [
        "Import cost: median of 5 fresh processes; wall = the whole `python -c \"import X\"` process "
        "(interpreter start included), import = time inside the process, RSS = peak (ru_maxrss).",
        "",
        "| Measure | codeflare | codeflare-sdk 0.40.1 | Target | |",
        "|---|---|---|---|---|",
    ]
    other_wall = f"{other['wall_s']:.2f} s" if other else "not measured"
    other_rss = f"{other['rss_mib']:.0f} MiB" if other else "not measured"
    lines += [
        f"| `python -c \"import codeflare\"` wall | {ours['wall_s']:.3f} s "
        f"(import {ours['import_s'] * 1000:.1f} ms) "
        f"| {other_wall} | <= 0.15 s | {verdict(ours['wall_s'] <= 0.15)} |",
        f"| peak RSS | {ours['rss_mib']:.0f} MiB | {other_rss} | <= 40 MiB "
        f"| {verdict(ours['rss_mib'] <= 40)} |",
        f"| `import codeflare.sdk` (first SDK use) wall | {sdk['wall_s']:.3f} s, {sdk['rss_mib']:.0f} MiB "
        "| | reported | |",
        f"| `python -c pass` (interpreter alone) | {imports['pass']['wall_s']:.3f} s, "
        f"{imports['pass']['rss_mib']:.0f} MiB | | reported | |",
    ]
    if "ours_mb" in sizes:
        ours_mb = float(sizes["ours_mb"])
        other_mb = f"{float(sizes['other_mb']):.0f} MB" if "other_mb" in sizes else "not measured"
        lines.append(f"| installed size without `local` | {ours_mb:.0f} MB | {other_mb} | <= 80 MB "
                     f"| {verdict(ours_mb <= 80)} |")
    else:
        failure = str(sizes.get("ours_error", ""))[-300:].replace("\n", " ")
        lines.append(f"| installed size without `local` | install failed: {failure} | | <= 80 MB "
                     "| **missed** |")
    if other_error:
        lines += ["", f"codeflare-sdk {OTHER_VERSION} could not be installed: `{other_error[-300:]}`"]
    lines += [
        "",
        "API requests per SDK call (counted by a reverse proxy in front of a `codeflare server`; "
        "a namespace with a default LocalQueue):",
        "",
        "| Call | Requests | What |",
        "|---|---|---|",
    ]
    for label, count, seen in requests:
        counted = collections.Counter(seen).items()
        summary = ", ".join(f"{n}x {what}" if n > 1 else what for what, n in counted)
        lines.append(f"| {label} | {count} | {summary} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--skip-other", action="store_true", help="do not install/measure codeflare-sdk")
    args = parser.parse_args()

    other_python, other_error = (None, "skipped (--skip-other)") if args.skip_other else other_sdk()
    python = Path(sys.executable)
    imports = {
        "pass": import_cost(python, "sys"),
        "codeflare": import_cost(python, "codeflare"),
        "codeflare.sdk": import_cost(python, "codeflare.sdk"),
    }
    if other_python is not None:
        imports["codeflare_sdk"] = import_cost(other_python, "codeflare_sdk")
    sizes = installed_sizes(other_python)
    requests = request_counts()
    markdown = report(imports, other_error, sizes, requests)
    print(markdown)
    if not args.no_write:
        from benchmarks.results import write_section

        write_section("sdk", markdown)


if __name__ == "__main__":
    main()
