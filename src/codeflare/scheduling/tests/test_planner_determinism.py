"""Preemption planning gives the same decisions as the planner it replaced (issue 14, item 5).

The cheap planner (per-queue admitted index, early exit when no candidate can exist) must not
change one decision. ``data/planner_traces.json`` holds, per seed, the SHA-256 of the trace
(admissions, preemptions, pending reasons and retry times per cycle) that the previous planner
gave for a random stream of arrivals, finishes, deletions, priority and quota changes, and how
many preemptions it made; every seed is replayed and compared. To
re-record after an intended change of behaviour: ``python -c "from
codeflare.scheduling.tests.test_planner_determinism import record; record()"``.

Re-recorded on 2026-12-03, when a head that needs preemption where no plan can find candidates
came to be parked as its queue's candidate instead of after the round's earlier admissions: 4
of the 50 traces changed, only in the numbers of such reasons (quota as it stood when the head
was taken, as Kueue words it at nomination); the admissions, preemptions, reason order and
retry times of all 50 were compared with the messages left out and are the same.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from codeflare.scheduling.tests.test_properties import QueueSpec, random_scenario, run

DATA = Path(__file__).parent / "data" / "planner_traces.json"
SEEDS = range(40)
BUSY_SEEDS = range(100, 110)


def busy_scenario(seed: int) -> tuple[list[QueueSpec], list[tuple]]:
    """One cohort, preemption on in every queue, mostly arrivals: many plans per cycle."""
    rng = random.Random(seed)
    specs = [
        QueueSpec(
            "c1",
            tuple((rng.randint(2, 6), rng.choice([None, 4]), rng.choice([None, 2])) for _ in range(2)),
            "BestEffortFIFO",
            rng.choice(["LowerPriority", "LowerOrNewerEqualPriority"]),
            rng.choice(["Any", "LowerPriority"]),
            rng.choice(["LowerPriority", "Never"]),
        )
        for _ in range(4)
    ]
    ops: list[tuple] = []
    for _ in range(250):
        roll = rng.random()
        if roll < 0.6:
            ops.append(("arrive", rng.randrange(4), rng.choice(["500m", "1", "2", "3"]), rng.randrange(4)))
        elif roll < 0.85:
            ops.append(("finish", rng.randrange(50)))
        elif roll < 0.9:
            ops.append(("priority", rng.randrange(50), rng.randrange(4)))
        else:
            ops.append(("tick",))
    return specs, ops


def _summary(name: str, seed: int) -> dict[str, object]:
    specs, ops = (random_scenario if name == "random" else busy_scenario)(seed)
    trace = run(specs, ops)
    digest = hashlib.sha256(json.dumps(trace, separators=(",", ":")).encode()).hexdigest()
    return {"sha256": digest, "preemptions": sum(len(cycle[2]) for cycle in trace)}


def _cases() -> list[tuple[str, int]]:
    return [("random", s) for s in SEEDS] + [("busy", s) for s in BUSY_SEEDS]


def record() -> None:
    """Write the traces of the current planner (run only before an intended change)."""
    summaries = {f"{name}-{seed}": _summary(name, seed) for name, seed in _cases()}
    DATA.write_text(json.dumps(summaries, indent=1) + "\n")


@pytest.fixture(scope="module")
def recorded() -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads(DATA.read_text())
    return data


@pytest.mark.parametrize(("name", "seed"), _cases())
def test_same_decisions_as_the_previous_planner(
    recorded: dict[str, dict[str, object]], name: str, seed: int
) -> None:
    assert _summary(name, seed) == recorded[f"{name}-{seed}"]


def test_the_recorded_streams_preempt(recorded: dict[str, dict[str, object]]) -> None:
    """The comparison is worth something only if the planner chose victims in those streams."""
    for name, seed in _cases():
        if name == "busy":
            assert recorded[f"{name}-{seed}"]["preemptions"]
