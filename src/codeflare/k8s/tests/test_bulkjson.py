"""bulkjson: the same values as the standard library, and the GC left as it was found."""

from __future__ import annotations

import gc
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeflare.k8s import bulkjson

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)


@given(values)
def test_round_trips_as_the_standard_library_does(value: object) -> None:
    assert bulkjson.loads(bulkjson.dumps(value)) == json.loads(json.dumps(value)) == value


def test_the_collector_is_resumed_and_left_off_when_it_was_off() -> None:
    assert gc.isenabled()
    bulkjson.loads(b'{"a": [1, 2]}')
    assert gc.isenabled()
    gc.disable()
    try:
        bulkjson.loads(b"[]")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_not_json_is_a_value_error_and_the_collector_still_resumes() -> None:
    with pytest.raises(ValueError):
        bulkjson.loads(b"{not json")
    assert gc.isenabled()
