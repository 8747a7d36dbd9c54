"""Loads the operator configuration from its ConfigMap, creating it with defaults when missing.

The document itself (model, defaults, validation) is :mod:`codeflare.operator.config`; this
module only talks to the cluster. A bad document raises :class:`ConfigError` listing every bad
field; the caller refuses to start.
``watch_for_change`` resolves when the stored document differs from the one in use, which the
operator answers with a clean restart (the documented reload behaviour).
"""

from __future__ import annotations

import asyncio
import logging

from codeflare.kube import errors, kinds
from codeflare.kube.client import AsyncKube
from codeflare.operator.config import CONFIG_KEY, OperatorConfig, config_map

log = logging.getLogger(__name__)


async def load_config(kube: AsyncKube, namespace: str, name: str) -> tuple[OperatorConfig, str]:
    """The configuration and the raw text it came from; creates the ConfigMap when absent."""
    stored = await kube.find(kinds.CONFIGMAP, name, namespace)
    if stored is None:
        config = OperatorConfig.default()
        manifest = config_map(namespace, config)
        manifest["metadata"]["name"] = name
        try:
            stored = await kube.create(kinds.CONFIGMAP, manifest, namespace)
            log.info("created ConfigMap %s/%s with the default configuration", namespace, name)
        except errors.AlreadyExists:
            stored = await kube.get(kinds.CONFIGMAP, name, namespace)
    text = str((stored.get("data") or {}).get(CONFIG_KEY, ""))
    return OperatorConfig.from_yaml(text), text


async def watch_for_change(
    kube: AsyncKube, namespace: str, name: str, current: str, interval: float = 2.0
) -> None:
    """Return once the ConfigMap's ``config.yaml`` differs from ``current`` (or it was deleted)."""
    while True:
        await asyncio.sleep(interval)
        try:
            stored = await kube.find(kinds.CONFIGMAP, name, namespace)
        except errors.KubeError as exc:
            log.debug("configuration check failed: %s", exc)
            continue
        text = None if stored is None else str((stored.get("data") or {}).get(CONFIG_KEY, ""))
        if text != current:
            log.warning("ConfigMap %s/%s changed; restarting to apply it", namespace, name)
            return
