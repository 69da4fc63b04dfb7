"""Malformed `#[metadata]` objects (issue 29, item 8): wrong types in a node, JSON's
non-numbers, integers of thousands of digits, nesting deeper than TVM's layout. Every one is a
located MetadataError inside the section, and through the command line exit 2, never a
traceback."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rvmdbg import cli
from rvmdbg.relay.metadata import encode_ndarray

from test_metadata import (  # noqa: F401  (helpers shared with the format's own tests)
    USE0, VIRTUAL_DEVICE, add_table, doc_with, error_of, file_with,
)

DEV_BODY = ('def @main(%x: Tensor[(3), float32]) {\n'
            '  %0 = fn (%p0: Tensor[(3), float32], Primitive=1, '
            'virtual_device=meta[VirtualDevice][0]) {\n'
            '    add(%p0, %p0)\n  };\n  %0(%x)\n}')


def _doc():
    return doc_with([encode_ndarray(np.zeros(5, "float32"))])


def _section_line(text: str) -> int:
    return text.split("\n").index("#[metadata]") + 1


def _const_node(doc) -> int:
    return next(i for i, n in enumerate(doc["nodes"]) if n["type_key"] == "relay.Constant")


@pytest.mark.parametrize("change, message", [
    (lambda d, c: d["nodes"][c].__setitem__("attrs", "data"), "`attrs` must be an object"),
    (lambda d, c: d["nodes"][c]["attrs"].__setitem__("data", 3), "`attrs` must be an object"),
    (lambda d, c: d["nodes"][1].__setitem__("data", {"a": 1}), "`data` must be a list"),
    (lambda d, c: d["nodes"][1].__setitem__("data", [1.5]), "`data` must be a list"),
    (lambda d, c: d["nodes"][1].__setitem__("keys", "relay.Constant"), "`keys` must be a list"),
    (lambda d, c: d["nodes"][1].__setitem__("data", [99]), "`data` must be a list"),
])
def test_a_node_of_the_wrong_types_is_located_on_its_node(change, message):
    doc = _doc()
    change(doc, _const_node(doc))
    text = file_with(USE0, doc)
    e = error_of(text)
    assert message in e.message and "metadata node" in e.message
    assert e.span.line > _section_line(text)


def test_infinity_and_nan_are_not_numbers_of_the_section():
    for word in ("Infinity", "-Infinity", "NaN"):
        doc = json.dumps(_doc(), indent=2).replace('"root": 1', f'"root": 1, "data": {word}')
        text = file_with(USE0, doc)
        e = error_of(text)
        assert f"{word} in the metadata" in e.message
        line = text.split("\n")[e.span.line - 1]
        assert line[e.span.col - 1:].startswith(word)


def test_an_integer_of_5000_digits_is_located():
    doc = json.dumps(_doc(), indent=2).replace('"root": 1', '"root": ' + "7" * 5000)
    text = file_with(USE0, doc)
    e = error_of(text)
    assert "an integer of 5000 digits" in e.message
    assert e.span.line > _section_line(text)


def test_deep_nesting_points_into_the_section():
    doc = json.dumps(_doc(), indent=2).replace('"root": 1', '"root": 1, "x": '
                                               + "[" * 50_000 + "]" * 50_000)
    text = file_with(USE0, doc)
    e = error_of(text)
    assert "nested 50001 levels deep" in e.message
    assert (e.span.line, e.span.col) != (1, 1) and e.span.line > _section_line(text)


def test_a_5000_digit_attribute_compiles_to_manifest_alloc(tmp_path, capsys):
    doc = _doc()
    device = dict(VIRTUAL_DEVICE, attrs=dict(VIRTUAL_DEVICE["attrs"], target="9" * 5000))
    add_table(doc, "VirtualDevice", device)
    path = tmp_path / "m.relay"
    path.write_text(file_with(DEV_BODY, doc))
    code = cli.main(["compile", str(path), "--stage", "ManifestAlloc"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and code in (0, 2), err
    assert code == 0, err


def test_through_the_command_line_every_fault_is_exit_2(tmp_path, capsys):
    doc = _doc()
    doc["nodes"][_const_node(doc)]["attrs"] = "data"
    path = tmp_path / "m.relay"
    path.write_text(file_with(USE0, doc))
    code = cli.main(["run", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "m.relay:" in err
