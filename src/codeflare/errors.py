"""The root of every exception the project raises on purpose.

``CodeFlareError`` is the one type a user can catch for anything this SDK reports: invalid
configuration (:class:`codeflare.sdk.config.ConfigurationError`), manifests our CRDs would
refuse (:class:`codeflare.api.validation.ManifestError`), API failures carrying the server's
message and the object's name (:class:`codeflare.kube.errors.KubeError` and its subclasses), and
timeouts waiting for a cluster or job.
"""

from __future__ import annotations


class CodeFlareError(Exception):
    """Base class of every error this project raises on purpose."""


class WaitTimeout(CodeFlareError, TimeoutError):
    """Something did not reach the wanted state in time; the message says what it was waiting on."""


class MissingDependency(CodeFlareError, ImportError):
    """An optional dependency (e.g. Ray for the Jobs client) is not installed."""
