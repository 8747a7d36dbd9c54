"""The generated protobuf tables are the generator's: the same fields and decoding kinds as its SPEC
(only the numbers come from upstream), and the generator reads numbers and refuses type mismatches."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from codeflare.apiserver.endpoints import protowire_tables

GENERATOR = Path(__file__).resolve().parents[5] / "scripts" / "gen_protowire_tables.py"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_protowire_tables", GENERATOR)
    assert spec is not None and spec.loader is not None, GENERATOR
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up while executing
    spec.loader.exec_module(module)
    return module


def test_the_tables_hold_exactly_the_generators_fields() -> None:
    gen = generator()
    for name, (_, fields) in gen.SPEC.items():
        assert sorted(protowire_tables.MESSAGES[name].values()) == sorted(fields), name
    assert set(protowire_tables.MESSAGES) == set(gen.SPEC)
    for kind, (api_version, _, fields) in gen.TOP.items():
        assert protowire_tables.TOP[kind][0] == api_version
        assert sorted(protowire_tables.TOP[kind][1].values()) == sorted(fields), kind
    assert set(protowire_tables.TOP) == set(gen.TOP)


PROTO = """
// Comments and options are skipped.
message ConfigMap {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  // data = 9 in a comment is not a field
  map<string, string> data = 2;
  map<string, bytes> binaryData = 3;
  optional bool immutable = 4;
}
"""


def test_the_generator_takes_numbers_from_the_proto_and_checks_types() -> None:
    gen = generator()
    parsed = gen.parse_proto(PROTO)["ConfigMap"]
    assert {name: f.number for name, f in parsed.items()} == {
        "metadata": 1,
        "data": 2,
        "binaryData": 3,
        "immutable": 4,
    }
    errors: list[str] = []
    fields = [("metadata", "ObjectMeta"), ("data", "map"), ("binaryData", "map"), ("missing", "str")]
    numbered = gen._numbered("ConfigMap", fields, parsed, errors)
    assert [n for n, _, _ in numbered] == [1, 2, 3]
    assert errors == [
        "ConfigMap.binaryData: proto type  map<string,bytes> cannot be decoded as 'map'",
        "ConfigMap.missing: not in the proto",
    ]
