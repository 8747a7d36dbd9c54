"""The server's JSON encoder: orjson's bytes decode to what the standard library's would, and
whatever orjson refuses (integers beyond 64 bits, non-string keys) is still encoded."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from codeflare.apiserver.storage.codec import dumps, dumps_bytes

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(value=TREES)
def test_encodes_what_the_standard_library_encodes(value: Any) -> None:
    standard = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert json.loads(dumps_bytes(value)) == json.loads(standard)
    assert json.loads(dumps(value)) == json.loads(standard)


def test_compact_utf8_without_escapes() -> None:
    assert dumps_bytes({"a": ["é", 1, None]}) == '{"a":["é",1,null]}'.encode()


def test_what_orjson_refuses_is_encoded_by_the_standard_library() -> None:
    assert dumps({"big": 2**80}) == '{"big":1208925819614629174706176}'
    assert dumps_bytes({1: "x"}) == b'{"1":"x"}'
