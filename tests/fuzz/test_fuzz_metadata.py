"""A `#[metadata]` fuzzer: TVM's metadata section of a real program, damaged in its structure
(keys removed, nodes and tables swapped or pointed past the end), its types (a field given a
string, a list, an object, Infinity, NaN), its sizes (integers of thousands of digits, base64
tensors cut or lying about their shape) and its nesting (thousands deep), then `run` and
`compile --stage ManifestAlloc` on it in the fuzz child under its address-space cap: exit 0,
1 or 2, no traceback, no hang.

Hypothesis draws the damage; seeded and brief by default, `pytest -m fuzz` runs long."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from harness import assert_clean, brief, campaign, long, run_cases
from rvmdbg.relay.metadata import encode_ndarray, metadata_text

NAME = "m.relay"
BODY = ('#[version = "0.0.5"]\n'
        'def @main(%x: Tensor[(3), float32]) {\n'
        '  %0 = fn (%p0: Tensor[(3), float32], Primitive=1, '
        'virtual_device=meta[VirtualDevice][0]) {\n'
        '    add(%p0, meta[relay.Constant][0] /* ty=Tensor[(3), float32] */)\n  };\n'
        '  %0(%x)\n}\n')
VIRTUAL_DEVICE = {"type_key": "VirtualDevice", "attrs": {
    "device_type_int": "1", "memory_scope": "0", "target": "0", "virtual_device_id": "0"}}
ODD = ["INF", "NAN", "BIG", "DEEP", None, True, -1, 0, 2 ** 63, 1.5, "", "x", "9" * 5000,
       "\x1b[2J", [], {}, [[[]]], {"type_key": "Array"}, [1, 2, 3], "AAAA", "P6G0lv!!"]


def good_doc() -> dict:
    doc = json.loads(metadata_text([np.array([1, 2, 3], "float32")]))
    doc["b64ndarrays"] = [encode_ndarray(np.array([1, 2, 3], "float32"))]
    nodes = doc["nodes"]
    first = len(nodes)
    nodes.append(json.loads(json.dumps(VIRTUAL_DEVICE)))  # a deep copy: mutations stay here
    nodes.append({"type_key": "Array", "data": [first]})
    nodes[1]["keys"].append("VirtualDevice")
    nodes[1]["data"].append(len(nodes) - 1)
    return doc


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def _set(doc, path, value):
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value == "DELETE":
        del target[path[-1]]
    else:
        target[path[-1]] = value


def _render(doc) -> str:
    text = json.dumps(doc, indent=2)
    # JSON's non-numbers and sizes the encoder cannot write, put in as text
    return (text.replace('"INF"', "Infinity").replace('"NAN"', "NaN")
            .replace('"BIG"', "7" * 5000).replace('"DEEP"', "[" * 20000 + "]" * 20000))


@st.composite
def sections(draw) -> str:
    doc = good_doc()
    kind = draw(st.sampled_from(["field", "field", "tensor", "bytes", "cut"]))
    if kind == "field":
        for _ in range(draw(st.integers(1, 3))):
            paths = [p for p in _paths(doc) if p]
            path = draw(st.sampled_from(paths))
            _set(doc, path, draw(st.sampled_from(ODD + ["DELETE"])))
        return _render(doc)
    if kind == "tensor":
        raw = bytearray(__import__("base64").b64decode(doc["b64ndarrays"][0]))
        for _ in range(draw(st.integers(1, 4))):
            raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0, 255))
        raw = raw[:draw(st.integers(0, len(raw)))]
        doc["b64ndarrays"][0] = __import__("base64").b64encode(bytes(raw)).decode()
        return _render(doc)
    text = bytearray(_render(doc).encode())
    if kind == "bytes":
        for _ in range(draw(st.integers(1, 6))):
            text[draw(st.integers(0, len(text) - 1))] = draw(st.sampled_from(
                b'{}[]",:0123456789 \x00\xff'))
    else:
        text = text[:draw(st.integers(0, len(text) - 1))]
    return text.decode("utf-8", "surrogateescape")


@st.composite
def cases(draw, n: int):
    out = []
    for _ in range(n):
        text = BODY + "#[metadata]\n" + draw(sections()) + "\n"
        argv = draw(st.sampled_from([["run", NAME, "[1, 2, 3]"],
                                     ["compile", NAME, "--stage", "ManifestAlloc"],
                                     ["check", NAME]]))
        out.append({"argv": argv, "files": {NAME: text}})
    return out


def test_the_undamaged_section_runs(tmp_path):
    case = {"argv": ["run", NAME, "[1, 2, 3]"],
            "files": {NAME: BODY + "#[metadata]\n" + _render(good_doc()) + "\n"}}
    assert_clean([case], run_cases([case], tmp_path / "config"), codes=(0,))


@brief()
@given(batch=cases(20))
def test_damaged_metadata_is_a_located_message(batch, tmp_path):
    campaign(batch, tmp_path)


@pytest.mark.fuzz
@long(60)
@given(batch=cases(40))
def test_damaged_metadata_long(batch, tmp_path):
    campaign(batch, tmp_path)
