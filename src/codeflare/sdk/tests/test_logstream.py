"""``unseen``: what the kept logs add to what a live tail already showed (pure, property tests)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.sdk.logstream import unseen

text = st.text(alphabet="ab\n", max_size=40)


@given(text, st.integers(min_value=0), st.integers(min_value=0))
def test_a_shown_prefix_of_the_whole_output_is_never_repeated(whole: str, cut: int, dropped: int) -> None:
    """The tail showed ``whole[:cut]``; the agent kept ``whole[dropped:]`` (a bounded tail)."""
    cut, dropped = cut % (len(whole) + 1), dropped % (len(whole) + 1)
    shown, kept = whole[:cut], whole[dropped:]
    rest = unseen(shown, kept)
    assert kept.endswith(rest)
    assert (shown + rest).endswith(kept)  # nothing kept is lost
    if dropped == 0:
        assert shown + rest == whole  # nothing shown twice when the whole output was kept
    elif dropped <= cut:
        # the overlap is the longest one: with repeated text it may be longer than the true one
        # (shown "a", kept "a" of "aa"); logs carry no offsets to tell them apart
        assert len(shown + rest) <= len(whole)


@given(text)
def test_nothing_shown_gives_all_kept_and_everything_shown_gives_nothing(whole: str) -> None:
    assert unseen("", whole) == whole
    assert unseen(whole, whole) == ""
    assert unseen(whole, "") == ""


def test_cases() -> None:
    assert unseen("first\n", "first\nsecond\n") == "second\n"
    assert unseen("a\nb\nc\n", "b\nc\nd\n") == "d\n"
    assert unseen("x\n", "y\n") == "y\n"
