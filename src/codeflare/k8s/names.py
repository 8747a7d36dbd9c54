"""Kubernetes name and label rules, with apimachinery's messages: one implementation for every layer.

The SDK checks user input with these before any call, the builders check manifests with them,
and the embedded API server validates stored objects with them, so a name refused by one is
refused by all, for the same reason, in the words kube-apiserver uses. Each ``is_*`` function
returns the list of problems (empty when the value is valid), like apimachinery's
``validation.Is*``; raising and field paths are the caller's business.
"""

from __future__ import annotations

import re

__all__ = [
    "DNS1035_LABEL_MAX",
    "DNS1123_LABEL_MAX",
    "DNS1123_SUBDOMAIN_MAX",
    "LABEL_VALUE_MAX",
    "QUALIFIED_NAME_MAX",
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_path_segment_name",
    "is_port_name",
    "is_qualified_name",
    "max_length_error",
]

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_FMT + ")?"

_LABEL_RE = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT)
_DNS1035_RE = re.compile(_DNS1035_FMT)
_QUALIFIED_RE = re.compile(_QUALIFIED_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


def _regex_error(what: str, fmt: str, examples: tuple[str, ...]) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{what} (e.g. {shown}, regex used for validation is '{fmt}')"


_LABEL_MSG = _regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
    _LABEL_FMT,
    ("my-name", "123-abc"),
)
_SUBDOMAIN_MSG = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    ("example.com",),
)
_DNS1035_MSG = _regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character",
    _DNS1035_FMT,
    ("my-name", "abc-123"),
)
_QUALIFIED_MSG = _regex_error(
    "name part must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    _QUALIFIED_FMT,
    ("MyName", "my.name", "123-abc"),
)
_QUALIFIED_SHAPE_MSG = (
    _regex_error(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character",
        _QUALIFIED_FMT,
        ("MyName", "my.name", "123-abc"),
    )
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
_LABEL_VALUE_MSG = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    ("MyValue", "my_value", "12345"),
)


def max_length_error(limit: int) -> str:
    """apimachinery's message for a value longer than ``limit``."""
    return f"must be no more than {limit} characters"


def _length_and_format(value: str, limit: int, pattern: re.Pattern[str], message: str) -> list[str]:
    errs = []
    if len(value) > limit:
        errs.append(max_length_error(limit))
    if not pattern.fullmatch(value):
        errs.append(message)
    return errs


def is_dns1123_label(value: str, max_length: int = DNS1123_LABEL_MAX) -> list[str]:
    """Problems with ``value`` as a DNS-1123 label (namespaces, most generated names).

    ``max_length`` tightens the limit where a name is used to derive longer ones (RayJob names).
    """
    return _length_and_format(value, max_length, _LABEL_RE, _LABEL_MSG)


def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with ``value`` as a DNS-1123 subdomain (most object names, label-key prefixes)."""
    return _length_and_format(value, DNS1123_SUBDOMAIN_MAX, _SUBDOMAIN_RE, _SUBDOMAIN_MSG)


def is_dns1035_label(value: str) -> list[str]:
    """Problems with ``value`` as a DNS-1035 label (Service names: must start with a letter)."""
    return _length_and_format(value, DNS1035_LABEL_MAX, _DNS1035_RE, _DNS1035_MSG)


def is_path_segment_name(value: str) -> list[str]:
    """Problems with ``value`` as one URL path segment (the loosest Kubernetes name rule)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_qualified_name(value: str) -> list[str]:
    """Problems with a label key, annotation key or finalizer: ``[prefix/]name``."""
    parts = value.split("/")
    if len(parts) == 1:
        return _qualified_name_part(parts[0])
    if len(parts) > 2:
        return [_QUALIFIED_SHAPE_MSG]
    prefix, name = parts
    if not prefix:
        return ["prefix part must be non-empty"]
    errs = ["prefix part " + e for e in is_dns1123_subdomain(prefix)]
    return errs + _qualified_name_part(name)


def _qualified_name_part(name: str) -> list[str]:
    if not name:
        return ["name part must be non-empty"]
    errs = []
    if len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + max_length_error(QUALIFIED_NAME_MAX))
    if not _QUALIFIED_RE.fullmatch(name):
        errs.append(_QUALIFIED_MSG)
    return errs


def is_label_value(value: str) -> list[str]:
    """Problems with a label value (which may be empty)."""
    return _length_and_format(value, LABEL_VALUE_MAX, _LABEL_VALUE_RE, _LABEL_VALUE_MSG)


IANA_SVC_NAME_MAX = 15
_PORT_NAME_CHARS_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE = re.compile("[a-z]")
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE = re.compile(_CONFIG_KEY_FMT)
_CONFIG_KEY_MSG = _regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    _CONFIG_KEY_FMT,
    ("key.name", "KEY_NAME", "key-name"),
)


def is_port_name(value: str) -> list[str]:
    """Problems with a named port (an IANA service name: ``http``, ``metrics-2``)."""
    errs = []
    if len(value) > IANA_SVC_NAME_MAX:
        errs.append(max_length_error(IANA_SVC_NAME_MAX))
    if not _PORT_NAME_CHARS_RE.fullmatch(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if not _PORT_NAME_LETTER_RE.search(value):
        errs.append("must contain at least one letter (a-z)")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_config_map_key(value: str) -> list[str]:
    """Problems with a ConfigMap or Secret data key (``key.name``, ``KEY_NAME``)."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_length_error(DNS1123_SUBDOMAIN_MAX))
    if not _CONFIG_KEY_RE.fullmatch(value):
        errs.append(_CONFIG_KEY_MSG)
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs
