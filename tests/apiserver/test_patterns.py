"""CRD ``pattern``s cannot stall the server: RE2 evaluates them in linear time.

Issue 15 observed ``^(a+)+$`` taking 1.2 s for a 25-character value, doubling with each
character and stalling every other request. Kubernetes evaluates patterns with Go's RE2 and
refuses, when the CRD is created, a pattern that does not compile (422 on the CRD). Completion
is asserted, with generous bounds; speed belongs to benchmarks.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.apiserver.http_support import client, ok, status_of
from tests.support.apiserver import ServerProcess

GROUP = "patterns.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
BASE = f"/apis/{GROUP}/v1/namespaces/default/words"


def crd(plural: str, kind: str, pattern: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"word": {"type": "string", "pattern": pattern}}}
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
            ],
        },
    }


def word(name: str, value: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Word", "metadata": {"name": name}, "spec": {"word": value}}


@pytest.fixture(scope="module")
def http(apiserver: ServerProcess) -> Iterator[httpx.Client]:
    with client(apiserver, timeout=60.0) as c:
        ok(c.post(CRDS, json=crd("words", "Word", r"^(a+)+$")), 201)
        yield c


def test_a_catastrophic_pattern_answers_and_other_requests_are_served(
    apiserver: ServerProcess, http: httpx.Client
) -> None:
    def evil() -> httpx.Response:
        with client(apiserver, timeout=60.0) as c:
            return c.post(BASE, json=word("evil", "a" * 30 + "!"))

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        refused = pool.submit(evil)
        others = [pool.submit(http.get, "/api/v1/namespaces/default/configmaps") for _ in range(3)]
        for other in others:
            ok(other.result(timeout=30))
        status = status_of(refused.result(timeout=30), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "spec.word"
    assert "should match '^(a+)+$'" in status["message"]
    ok(http.post(BASE, json=word("fine", "a" * 30)), 201)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?<=x)a", r"^a++$"])
def test_a_pattern_re2_cannot_compile_is_refused_with_the_crd(http: httpx.Client, pattern: str) -> None:
    status = status_of(http.post(CRDS, json=crd("perls", "Perl", pattern)), 422, "Invalid")
    cause = status["details"]["causes"][0]
    assert cause["field"].endswith("properties[word].pattern")
    assert "must be a valid regular expression, but isn't: error parsing regexp: " in cause["message"]
    status_of(http.get(f"{CRDS}/perls.{GROUP}"), 404, "NotFound")
