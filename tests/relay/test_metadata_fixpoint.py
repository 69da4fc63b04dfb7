"""Printing metadata is a fixpoint: for a module read from TVM's text, print(parse(print(m)))
is print(m) exactly, with bit-identical constants and equal metadata objects, whatever the
section held (VirtualDevices naming targets and strings, attribute objects whose integer
fields may or may not be node indices, nodes in any order) and for every corpus file and
generated model. (Printing once used to add the constants' device, their scope and the tables
after the section it came from at every round.)"""
from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from rvmdbg import workloads
from rvmdbg.relay.ast import Call, Constant, OpRef, Tuple
from rvmdbg.relay.equal import structural_equal
from rvmdbg.relay.loader import load_module
from rvmdbg.relay.metadata import MetaObject, encode_ndarray
from rvmdbg.relay.parser import parse
from rvmdbg.relay.printer import print_module

HEADER = '#[version = "0.0.5"]\n'
CORPUS = sorted((__import__("pathlib").Path(__file__).resolve().parents[1] / "corpus" / "tvm")
                .glob("*.relay"))


def constants_of(mod) -> list:
    """Every tensor constant of `main`'s result tuple, in order."""
    return [f.data for f in mod.functions["main"].body.fields if isinstance(f, Constant)]


def objects_of(mod) -> list:
    found: list = []

    def walk(e):
        if isinstance(e, Call):
            found.extend(v for v in e.attrs.values() if isinstance(v, MetaObject))
            for a in e.args:
                walk(a)
        elif isinstance(e, Tuple):
            for f in e.fields:
                walk(f)
    walk(mod.functions["main"].body)
    return found


def assert_fixpoint(mod) -> str:
    """print(parse(print(mod))) == print(mod), with an equal module and the same bits."""
    once = print_module(mod)
    back = parse(once, "<printed>")
    assert print_module(back) == once
    assert structural_equal(back, mod)
    return once


# ---- sections as TVM might write them ----------------------------------------------------------

@st.composite
def sections(draw):
    """(program text with a #[metadata] section, the tensors it holds): a section of strings,
    targets, VirtualDevices and attribute objects whose fields name each other (or hold plain
    integers that look like node indices), tensor constants, nodes in a drawn order."""
    n_const = draw(st.integers(0, 3))
    arrays = [np.frombuffer(draw(st.binary(min_size=4 * k, max_size=4 * k)), "float32")
              for k in draw(st.lists(st.integers(1, 3), min_size=n_const, max_size=n_const))]
    # logical nodes: ("kind", payload); references are to logical ids, renumbered below
    logical: list = []

    def add(node) -> int:
        logical.append(node)
        return len(logical) - 1
    strings = [add({"type_key": "runtime.String", "repr_str": s})
               for s in draw(st.lists(st.sampled_from(["global", "global.texture", "llvm"]),
                                      max_size=2))]
    targets = [add({"type_key": "Target", "attrs": {
        "kind": "0", "host": "0", "tag": ("@%d" % draw(st.sampled_from(strings))) if strings
        else "0"}}) for _ in range(draw(st.integers(0, 2)))]
    plain = st.integers(0, 40).map(str)  # plain integer fields, some in the nodes' range

    def ref(pool):
        return st.sampled_from(pool).map(lambda i: "@%d" % i) if pool else st.just("0")
    devices = [add({"type_key": "VirtualDevice", "attrs": {
        "device_type_int": draw(plain), "virtual_device_id": draw(plain),
        "memory_scope": draw(ref(strings)), "target": draw(ref(targets))}})
        for _ in range(draw(st.integers(0, 3)))]
    attr_objs = [add({"type_key": "relay.attrs.TestAttrs", "attrs": {
        "axis": draw(plain), "units": draw(plain), "layout": draw(ref(strings))}})
        for _ in range(draw(st.integers(0, 2)))]
    consts = [add({"type_key": "relay.Constant", "attrs": {
        "_checked_type_": "0", "data": str(k), "span": "0", "virtual_device_": "0"}})
        for k in range(n_const)]
    order = draw(st.permutations(range(len(logical))))
    at = {old: 2 + new for new, old in enumerate(order)}
    nodes: list = [{"type_key": ""}, None] + [None] * len(logical)

    def fix(v):
        return str(at[int(v[1:])]) if isinstance(v, str) and v.startswith("@") else v
    for old, node in enumerate(logical):
        node = dict(node)
        if "attrs" in node:
            node["attrs"] = {k: fix(v) for k, v in node["attrs"].items()}
        nodes[at[old]] = node
    tables = {"relay.Constant": consts, "VirtualDevice": devices,
              "relay.attrs.TestAttrs": attr_objs}
    keys, data = [], []
    for key, items in tables.items():
        if items:
            keys.append(key)
            data.append(len(nodes))
            nodes.append({"type_key": "Array", "data": [at[i] for i in items]})
    nodes[1] = {"type_key": "Map", "keys": keys, "data": data}
    doc = {"root": 1, "nodes": nodes, "b64ndarrays": [encode_ndarray(a) for a in arrays],
           "attrs": {"tvm_version": "0.12.dev0"}}
    uses = [f"meta[relay.Constant][{k}]" for k in range(n_const)]
    for key, items in tables.items():
        if key != "relay.Constant" and items:
            uses += [f"nn.relu(%x, obj=meta[{key}][{k}])"
                     for k in draw(st.lists(st.integers(0, len(items) - 1), max_size=3))]
    body = ", ".join(["%x"] + uses)
    text = (HEADER + f"def @main(%x: Tensor[(2,), float32]) {{\n  ({body},)\n}}\n"
            "#[metadata]\n" + json.dumps(doc, indent=1) + "\n")
    return text, arrays


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections(), st.booleans())
def test_print_of_a_parsed_section_is_a_fixpoint(drawn, made_here):
    text, arrays = drawn
    mod = parse(text, "m.relay")
    if made_here:
        # an object a pass made, with no section behind it (so no nodes its fields could
        # name), next to the ones read; its plain integers look like node indices
        made = MetaObject("VirtualDevice", 0, "VirtualDevice",
                          {"device_type_int": "3", "virtual_device_id": "7",
                           "memory_scope": "0", "target": "0"})
        main = mod.functions["main"]
        main.body.fields.append(Call(OpRef("nn.relu"), [main.params[0]], {"obj": made}))
    once = assert_fixpoint(mod)
    back = parse(once, "<printed>")
    for got, want in zip(constants_of(back), arrays):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    assert objects_of(back) == objects_of(mod)
    for obj in objects_of(back):
        # a field that named a string or a target in the text still names it
        was = next(o for o in objects_of(mod) if o == obj)
        for name in ("memory_scope", "target", "layout"):
            v = obj.attrs.get(name, "0")
            if v != "0" and was.origin is not None:
                assert obj.origin[int(v)] == was.origin[int(was.attrs[name])]


def test_the_first_print_of_a_read_section_keeps_it_from_growing():
    doc_nodes = [{"type_key": ""}, {"type_key": "Map", "keys": ["relay.Constant", "VirtualDevice"],
                                    "data": [6, 7]},
                 {"type_key": "VirtualDevice", "attrs": {
                     "device_type_int": "-1", "memory_scope": "3", "target": "0",
                     "virtual_device_id": "-1"}},
                 {"type_key": "runtime.String"},
                 {"type_key": "relay.Constant", "attrs": {
                     "_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "2"}},
                 {"type_key": "VirtualDevice", "attrs": {
                     "device_type_int": "1", "memory_scope": "3", "target": "0",
                     "virtual_device_id": "0"}},
                 {"type_key": "Array", "data": [4]}, {"type_key": "Array", "data": [5]}]
    doc = {"root": 1, "nodes": doc_nodes,
           "b64ndarrays": [encode_ndarray(np.arange(3, dtype="float32"))]}
    text = (HEADER + "def @main(%x: Tensor[(3,), float32]) {\n"
            "  (%x, meta[relay.Constant][0], nn.relu(%x, dev=meta[VirtualDevice][0]))\n}\n"
            "#[metadata]\n" + json.dumps(doc) + "\n")
    printed = print_module(parse(text, "m.relay"))
    sizes = []
    for _ in range(3):
        sizes.append(len(json.loads(printed.split("#[metadata]")[1])["nodes"]))
        again = print_module(parse(printed, "<printed>"))
        assert again == printed
        printed = again
    assert len(set(sizes)) == 1


def test_every_corpus_file_and_generated_model_prints_to_a_fixpoint():
    assert CORPUS
    texts = [(p.name, p.read_text(encoding="utf-8")) for p in CORPUS]
    for name in sorted(workloads.WORKLOADS):
        w = workloads.build(name, small=True)
        texts += [(name, w.text), (name + " (unbound)", w.unbound_text)]
    for name, text in texts:
        mod = load_module(text, name, prelude=False)
        once = print_module(mod)
        back = parse(once, name)
        assert print_module(back) == once, name
        assert structural_equal(back, mod), name
