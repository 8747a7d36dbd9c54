"""Warning headers: what any message becomes on the wire."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.apiserver.endpoints.responses import warning_header


def test_quotes_and_backslashes_are_escaped() -> None:
    assert warning_header('unknown field "spec.a\\b"') == '299 - "unknown field \\"spec.a\\\\b\\""'


def test_control_characters_become_spaces() -> None:
    assert warning_header("line one\r\nline two\x7f") == '299 - "line one  line two "'


@given(st.text())
def test_any_message_is_one_header_line(message: str) -> None:
    value = warning_header(message)
    assert not any(ord(c) < 32 or ord(c) == 127 for c in value)
    assert value.startswith('299 - "') and value.endswith('"')
