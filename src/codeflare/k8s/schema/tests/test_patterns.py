"""CRD ``pattern`` runs with RE2 semantics: linear time, RE2's syntax, refusals named.

Kubernetes compiles ``pattern`` with Go's ``regexp`` (RE2): catastrophic-backtracking patterns
answer in linear time and Perl-only syntax (backreferences, lookaround) is refused when the CRD
is created (apiextensions-apiserver ``validation.go``: "must be a valid regular expression").
"""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.k8s.schema import CompiledSchema
from codeflare.k8s.schema.checks import compile_pattern
from codeflare.k8s.schema.structural import check_structural

EVIL = [r"^(a+)+$", r"^(a|a)*$", r"^(a|aa)+$", r"^(.*a){12}$", r"^([a-z]+)*[0-9]$"]


@pytest.mark.parametrize("pattern", EVIL)
def test_backtracking_patterns_answer(pattern: str) -> None:
    """30 characters that a backtracking engine needs 2**30 steps for; RE2 answers at once."""
    regex = compile_pattern(pattern)
    answers: list[object] = []
    worker = threading.Thread(target=lambda: answers.append(regex.search("a" * 30 + "!")), daemon=True)
    worker.start()
    worker.join(20.0)  # a generous bound: completion is the assertion, speed is for benchmarks
    assert answers == [None]


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", r"(?<=x)a", r"(?!x)a", r"a++", r"a{1001}", r"[", r"\Z"],
)
def test_syntax_re2_refuses_is_an_error_naming_the_reason(pattern: str) -> None:
    with pytest.raises(re.error, match=r"^error parsing regexp: "):
        compile_pattern(pattern)


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        (r"^[a-z]+\z", "abc", True),  # \z is RE2's end of text
        (r"^[a-z]+\z", "abc\n", False),
        (r"^\d+$", "١٢", False),  # \d is ASCII in RE2
        (r"^\p{Greek}+$", "αβ", True),  # Unicode classes are RE2 syntax
        (r"(?i)^abc$", "ABC", True),
        (r"^.$", "é", True),  # . is one code point
    ],
)
def test_re2_semantics(pattern: str, value: str, matches: bool) -> None:
    assert (compile_pattern(pattern).search(value) is not None) is matches


def test_a_crd_schema_with_a_pattern_re2_refuses_is_not_structural() -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "pattern": r"(a)\1"}}}
    errs = check_structural(schema)
    assert [e.field for e in errs] == ["spec.validation.openAPIV3Schema.properties[v].pattern"]
    assert "must be a valid regular expression, but isn't: error parsing regexp: " in errs[0].message()


def test_compiled_schema_reports_a_value_not_matching() -> None:
    schema = CompiledSchema(
        {"type": "object", "properties": {"v": {"type": "string", "pattern": r"^(a+)+$"}}}
    )
    errs = schema.validate({"v": "a" * 30 + "!"})
    assert [e.field for e in errs] == ["v"] and "should match" in errs[0].message()
    assert schema.validate({"v": "a" * 30}) == []


@given(st.text(alphabet="ab.*+?()[]{}|^$\\-x", max_size=6), st.text(alphabet="ab.*+x", max_size=12))
def test_an_escaped_literal_matches_where_it_occurs(literal: str, text: str) -> None:
    assert (compile_pattern(re.escape(literal)).search(text) is not None) is (literal in text)
