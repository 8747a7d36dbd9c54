"""Which LocalQueue is a namespace's default: the annotated one, else the one named ``default``.

Kueue >= 0.17 treats a LocalQueue named ``default`` as the namespace's default
(pkg/controller/constants.DefaultLocalQueueName, applied by jobframework.ApplyDefaultLocalQueue
to jobs without a queue label); codeflare-sdk picks the LocalQueue annotated
``kueue.x-k8s.io/default-queue: "true"``. We deliberately let the annotation win when both exist
(an explicit choice over a naming convention; the SDK applies it before any webhook sees the job).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codeflare.api.kueue import namespace_default_queue
from codeflare.k8s.constants import DEFAULT_QUEUE_ANNOTATION


def lq(name: str, marked: bool = False) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "namespace": "ns"}
    if marked:
        meta["annotations"] = {DEFAULT_QUEUE_ANNOTATION: "True"}
    return {"metadata": meta}


def test_cases() -> None:
    assert namespace_default_queue([]) is None
    assert namespace_default_queue([lq("a"), lq("b")]) is None
    assert namespace_default_queue([lq("a"), lq("default")]) == "default"
    assert namespace_default_queue([lq("default"), lq("team", marked=True)]) == "team"
    assert namespace_default_queue([lq("z", marked=True), lq("b", marked=True)]) == "b"


names = st.sampled_from(["default", "a", "b", "team"])


@given(st.lists(st.tuples(names, st.booleans()), unique_by=lambda t: t[0]))
def test_the_annotation_wins_then_the_name(queues: list[tuple[str, bool]]) -> None:
    chosen = namespace_default_queue(lq(n, m) for n, m in queues)
    marked = sorted(n for n, m in queues if m)
    if marked:
        assert chosen == marked[0]
    else:
        assert chosen == ("default" if any(n == "default" for n, _ in queues) else None)
