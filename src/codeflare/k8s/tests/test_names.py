"""Name and label rules refuse what kube-apiserver refuses, with its messages."""

from __future__ import annotations

import pytest

from codeflare.k8s import names


@pytest.mark.parametrize("value", ["a", "my-name", "123-abc", "a" * 63])
def test_dns1123_labels(value: str) -> None:
    assert names.is_dns1123_label(value) == []


@pytest.mark.parametrize("value", ["", "A", "my_name", "-a", "a-", "a.b", "a" * 64])
def test_bad_dns1123_labels(value: str) -> None:
    assert names.is_dns1123_label(value)


def test_messages_are_apimachinery_s() -> None:
    assert names.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    assert names.is_dns1123_label("My") == [
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
        "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
        "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]
    assert names.is_dns1123_label("a" * 48, max_length=47) == ["must be no more than 47 characters"]
    assert names.is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert names.is_dns1123_subdomain("Bad")[0].startswith("a lowercase RFC 1123 subdomain")


def test_subdomains_dns1035_and_path_segments() -> None:
    assert names.is_dns1123_subdomain("example.com") == [] and names.is_dns1123_subdomain("a..b")
    assert names.is_dns1035_label("abc-123") == [] and names.is_dns1035_label("1abc")
    assert names.is_dns1035_label("1abc")[0].startswith("a DNS-1035 label must")
    assert names.is_path_segment_name("ok") == [] and names.is_path_segment_name("..") == ["may not be '..'"]
    assert names.is_path_segment_name("a/b%") == ["may not contain '/'", "may not contain '%'"]


@pytest.mark.parametrize("value", ["a", "A.b_c-1", "example.com/MyName", "kueue.x-k8s.io/queue-name"])
def test_qualified_names(value: str) -> None:
    assert names.is_qualified_name(value) == []


def test_bad_qualified_names() -> None:
    assert names.is_qualified_name("/a") == ["prefix part must be non-empty"]
    assert names.is_qualified_name("a/") == ["name part must be non-empty"]
    assert names.is_qualified_name("a/b/c")[0].startswith("a qualified name must consist")
    assert names.is_qualified_name("Bad_Prefix/x")[0].startswith("prefix part a lowercase RFC 1123 subdomain")
    assert names.is_qualified_name("x" * 64) == ["name part must be no more than 63 characters"]
    assert names.is_qualified_name("-x")[0].startswith("name part must consist")


def test_label_values() -> None:
    assert names.is_label_value("") == [] and names.is_label_value("my_value.1") == []
    assert names.is_label_value("x" * 64) == ["must be no more than 63 characters"]
    assert names.is_label_value("has space")[0].startswith("a valid label must be an empty string")
