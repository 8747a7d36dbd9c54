"""How to reach a Kubernetes API: kubeconfig file, token + server, in-cluster, or local mode.

Each constructor returns a :class:`Connection` holding a lightkube configuration; nothing here
opens a connection. Local mode's kubeconfig lives in ``$CODEFLARE_HOME`` (default
``~/.codeflare/local``). No process-wide state is touched (``KUBECONFIG`` is only read).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_LOCAL_HOME = Path("~/.codeflare/local")
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def local_home(home: str | Path | None = None) -> Path:
    """The local mode's home directory: the argument, ``$CODEFLARE_HOME``, or the default."""
    chosen = home or os.environ.get("CODEFLARE_HOME") or DEFAULT_LOCAL_HOME
    return Path(chosen).expanduser()


@dataclass(frozen=True)
class Connection:
    """A lightkube configuration plus the namespace calls default to."""

    config: Any
    namespace: str = "default"
    description: str = ""


def from_kubeconfig(path: str | Path | None = None, context: str | None = None) -> Connection:
    """From a kubeconfig file (the argument, ``$KUBECONFIG``'s first entry, or ``~/.kube/config``)."""
    from lightkube import KubeConfig

    if path is None:
        env = os.environ.get("KUBECONFIG", "")
        path = env.split(os.pathsep)[0] if env else Path("~/.kube/config").expanduser()
    config = KubeConfig.from_file(str(path))
    single = config.get(context_name=context)
    if single is None:
        raise ValueError(f"kubeconfig {path} has no usable context")
    return Connection(single, single.namespace or "default", f"kubeconfig {path}")


def from_token(
    server: str,
    token: str,
    *,
    ca_file: str | Path | None = None,
    insecure: bool = False,
    namespace: str = "default",
) -> Connection:
    """From a bearer token and server URL; TLS is verified unless ``insecure`` is explicitly true."""
    from lightkube import KubeConfig

    if ca_file is None and not insecure and server.startswith("https://"):
        raise ValueError("a CA file is required to verify the server (or pass insecure=True explicitly)")
    cluster: dict[str, Any] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority"] = str(ca_file)
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    doc = {
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": namespace}}],
        "current-context": "c",
    }
    return Connection(KubeConfig.from_dict(doc).get(), namespace, f"token for {server}")


def in_cluster() -> Connection:
    """From the pod's service account."""
    from lightkube import KubeConfig

    namespace_file = SERVICE_ACCOUNT_DIR / "namespace"
    namespace = namespace_file.read_text().strip() if namespace_file.exists() else "default"
    return Connection(KubeConfig.from_service_account().get(), namespace, "in-cluster service account")


def local(home: str | Path | None = None) -> Connection:
    """Local mode's API server, from ``<home>/kubeconfig``."""
    path = local_home(home) / "kubeconfig"
    if not path.exists():
        raise FileNotFoundError(
            f"local mode is not running: {path} does not exist (run `codeflare local up`)"
        )
    return from_kubeconfig(path)


def auto(kubeconfig: str | Path | None = None) -> Connection:
    """The explicit kubeconfig, else in-cluster, else ``$KUBECONFIG``/~/.kube/config, else local mode."""
    if kubeconfig is not None:
        return from_kubeconfig(kubeconfig)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and SERVICE_ACCOUNT_DIR.exists():
        return in_cluster()
    default = Path("~/.kube/config").expanduser()
    if os.environ.get("KUBECONFIG") or default.exists():
        return from_kubeconfig()
    return local()
