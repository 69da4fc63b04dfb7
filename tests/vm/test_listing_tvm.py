"""`rvmdbg compile` / `trace` / `run --executor vm`: TVM's listing layout, saved executables,
traces, and run-time errors located by function, pc and source line."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from rvmdbg.cli import main
from rvmdbg.relay.loader import load_module
from rvmdbg.vm.compiler import compile_module
from rvmdbg.vm.executable import listing_line
from rvmdbg.vm.machine import VirtualMachine

ROOT = Path(__file__).resolve().parents[2]

IF_TUPLE = """#[version = "0.0.5"]
// args: True
def @main(%b: bool) -> (int32, int32) {
  let %t = (1, 2);
  if (%b) { %t } else { (%t.1, %t.0) }
}
"""

# What TVM's compiler logs for it: `exe.constants` (TVM's NDArray summary per constant), then
# `exe.bytecode`: header lines, `pc: opcode fields`, `# text` (no kernels, so no kernel table).
IF_TUPLE_LISTING = """\
VM Const[0]: NDArray[(),int32,(1,0)]=[1] on device index 0
VM Const[1]: NDArray[(),int32,(1,0)]=[2] on device index 0

VM Function[0]: main(b)
# reg file size = 9
# instruction count = 14
opcode, fields # inst(text):
 0: 11 0 0 1                              # load_const $1 Const[0] 0
 1: 11 1 0 2                              # load_const $2 Const[1] 0
 2: 7 0 2 3 1 2                           # alloc_data $3 tag(0) [$1,$2]
 3: 14 1 4                                # load_consti $4 1
 4: 10 0 4 1 3                            # if $0 $4 1 3
 5: 0 3 5                                 # move $5 $3
 6: 12 7                                  # goto 7
 7: 9 3 1 6                               # get_field $6 $3[1]
 8: 9 3 0 7                               # get_field $7 $3[0]
 9: 7 0 2 8 6 7                           # alloc_data $8 tag(0) [$6,$7]
10: 20 6                                  # kill_register $6
11: 20 7                                  # kill_register $7
12: 0 8 5                                 # move $5 $8
13: 1 5                                   # ret $5

"""


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def write(tmp_path):
    def write_file(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path
    return write_file


def test_compile_prints_tvms_layout(capsys, write):
    path = write("if_tuple.relay", IF_TUPLE)
    code, out, err = cli(capsys, "compile", path)
    assert code == 0 and err == ""
    assert out == IF_TUPLE_LISTING


def test_listing_lines_follow_the_serialized_fields(capsys):
    code, out, _ = cli(capsys, "compile", ROOT / "programs" / "closures.relay")
    assert code == 0
    exe = compile_module(load_module((ROOT / "programs" / "closures.relay").read_text(),
                                     "closures.relay"))
    blocks = out.strip("\n").split("\n\n")
    assert blocks[0] == exe.constants_text(preview=4).rstrip("\n")
    assert blocks[1] == exe.primitives().rstrip("\n")
    blocks = blocks[2:]
    assert len(blocks) == len(exe.functions)
    for fn, block in zip(exe.functions, blocks):
        lines = block.split("\n")
        assert lines[0] == f"VM Function[{exe.func_index(fn.name)}]: {fn.name}({', '.join(fn.params)})"
        assert lines[1] == f"# reg file size = {fn.register_file_size}"
        assert lines[2] == f"# instruction count = {len(fn.instructions)}"
        assert lines[3] == "opcode, fields # inst(text):"
        body = lines[4:]
        assert len(body) == len(fn.instructions)
        for pc, (line, instr) in enumerate(zip(body, fn.instructions)):
            m = re.match(r"^ *(\d+): ([\d\- ]+?) +# (.*)$", line)
            assert m, line
            assert int(m.group(1)) == pc and line.index(":") == max(2, len(str(pc)))
            numbers = [int(v) for v in m.group(2).split()]
            assert numbers == [instr.opcode, *instr.fields()]
            assert m.group(3) == instr.text()
            assert line == listing_line(pc, instr)


def test_compile_passes_prints_every_stage_first(capsys):
    code, out, _ = cli(capsys, "compile", ROOT / "programs" / "fib.relay", "--passes")
    assert code == 0
    headers = re.findall(r"^// ==== (\w+):", out, flags=re.M)
    assert headers == ["Input", "RemoveUnusedFunctions", "SimplifyInference", "EtaExpand",
                       "FoldConstant", "FuseOps", "ToANormalForm", "InferType", "LambdaLift", "DeadCodeElimination", "ManifestAlloc",
                       "ManifestLifetimes", "MemoryPlan"]
    stage_text, listing = out.split("// ==== Bytecode\n")
    assert "memory.alloc_storage(" in stage_text and "memory.kill(" in stage_text
    tables, listing = listing.split("VM Function[0]", 1)
    assert tables.startswith("VM Const[0]: ") and "VM PackedFunc[0]: vm_mod_fused_less" in tables
    assert listing.startswith(": fib(n)\n")


def test_saved_executable_runs_and_traces_like_the_source(capsys, tmp_path):
    rvmx = tmp_path / "loop.rvmx"
    code, out, err = cli(capsys, "compile", ROOT / "programs" / "loop.relay", "-o", rvmx)
    assert code == 0 and rvmx.exists() and "saved" in err
    code, listed, _ = cli(capsys, "compile", rvmx)
    assert code == 0 and listed == out
    assert cli(capsys, "run", rvmx, "10", "--json")[1].strip() == \
        '{"result": {"dtype": "int32", "shape": [], "data": 55}}'
    assert cli(capsys, "run", ROOT / "programs" / "loop.relay", "10")[1].strip() == "55"
    source_trace = cli(capsys, "trace", ROOT / "programs" / "loop.relay", "3")[1]
    saved_trace = cli(capsys, "trace", rvmx, "3")[1]
    assert source_trace == saved_trace


def test_trace_prints_one_line_per_instruction_until_halt(capsys):
    code, out, _ = cli(capsys, "trace", ROOT / "programs" / "fib.relay", "4")
    assert code == 0
    lines = out.splitlines()
    exe = compile_module(load_module((ROOT / "programs" / "fib.relay").read_text(), "fib.relay"))
    vm = VirtualMachine(exe)
    assert int(vm.invoke("main", [np.array(4, dtype="int32")])) == 3
    assert len(lines) == vm.steps
    assert lines[0].startswith("[step 0] @main pc=0: invoke $1 VMFunc[0]($0)")
    assert re.match(r"\[step \d+\] @main pc=1: ret \$1 +halt: 3$", lines[-1])
    for i, line in enumerate(lines):
        assert line.startswith(f"[step {i}] @")


def test_reuse_registers_reports_smaller_files(capsys):
    code, out, _ = cli(capsys, "compile", ROOT / "programs" / "fib.relay", "--reuse-registers")
    assert code == 0
    report = re.findall(r"^# @(\w+): reg file size (\d+) -> (\d+)$", out, flags=re.M)
    assert report and all(int(after) <= int(before) for _, before, after in report)
    assert any(int(after) < int(before) for _, before, after in report)
    sizes = re.findall(r"^# reg file size = (\d+)$", out, flags=re.M)
    assert [int(s) for s in sizes] == [int(after) for _, _, after in report]


def test_match_failure_in_the_prelude_names_function_pc_and_line(capsys, write):
    path = write("hd.relay", '#[version = "0.0.5"]\ndef @main() -> int32 {\n  @hd(Nil)\n}\n')
    code, out, err = cli(capsys, "run", path)
    assert code == 1 and out == ""
    assert "match? found no matching clause" in err
    assert re.search(r"at @hd pc=\d+: fatal", err)
    assert re.search(r"\d+ \|\s+match\? \(%", err)  # the prelude's line, quoted
    assert re.search(r"called from @main pc=\d+ \(.*hd\.relay:3:3\)", err)
    assert "Traceback" not in err


def test_shape_mismatch_names_function_pc_and_line(capsys, write):
    path = write("shape.relay", """#[version = "0.0.5"]
def @main(%a: Tensor[(?,), float32], %b: Tensor[(?,), float32]) -> Tensor[(?,), float32] {
  %a + %b
}
""")
    assert cli(capsys, "run", path, "[1, 2]", "[3, 4]")[1].strip() == "[4., 6.] (float32)"
    code, out, err = cli(capsys, "run", path, "[1, 2]", "[1, 2, 3]")
    assert code == 1 and out == ""
    assert "cannot broadcast" in err
    assert re.search(r"at @main pc=\d+: invoke_packed PackedFunc\[\d+\]", err)
    assert re.search(r"from .*shape\.relay:\d+:\d+", err) and re.search(r"\d+ \| ", err)
    # a trace shows the instructions up to the failing one, then the same error
    code, out, err = cli(capsys, "trace", path, "[1, 2]", "[1, 2, 3]")
    assert code == 1 and out.count("\n") >= 1 and "cannot broadcast" in err


def test_run_executor_vm_agrees_with_interp(capsys):
    for name in ("closures.relay", "refs.relay", "tuples.relay", "grow.relay"):
        path = ROOT / "programs" / name
        vm = cli(capsys, "run", path, "--executor", "vm", "--json")
        interp = cli(capsys, "run", path, "--executor", "interp", "--json")
        assert vm[0] == 0 and vm[1] == interp[1]


def test_corrupted_executable_is_a_usage_error(capsys, tmp_path):
    rvmx = tmp_path / "fib.rvmx"
    assert cli(capsys, "compile", ROOT / "programs" / "fib.relay", "-o", rvmx)[0] == 0
    data = bytearray(rvmx.read_bytes())
    data[-3] ^= 0xFF
    rvmx.write_bytes(bytes(data))
    for command in ("run", "trace", "compile"):
        code, out, err = cli(capsys, command, rvmx)
        assert code == 2 and "checksum" in err and "Traceback" not in err
    code, _, err = cli(capsys, "compile", rvmx.with_name("missing.rvmx"))
    assert code == 2


def test_compile_rejects_passes_for_a_saved_executable(capsys, tmp_path):
    rvmx = tmp_path / "fib.rvmx"
    cli(capsys, "compile", ROOT / "programs" / "fib.relay", "-o", rvmx)
    code, _, err = cli(capsys, "compile", rvmx, "--passes")
    assert code == 2 and "passes" in err


def test_names_option_notes_callees(capsys):
    code, out, _ = cli(capsys, "compile", ROOT / "programs" / "fib.relay", "--names")
    assert code == 0
    assert "# invoke $11 VMFunc[0]($10)  // @fib" in out
    assert "(in: $11, $16, out: $20)  // vm_mod_fused_add" in out


def test_compile_prints_the_constant_pool_and_kernel_table_as_tvm_logs_them(capsys, write):
    path = write("pool.relay", '#[version = "0.0.5"]\n'
                 "def @main(%x: Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32] {\n"
                 "  add(%x, full(1.5f, shape=[3, 4]))\n}\n")
    code, out, _ = cli(capsys, "compile", path)
    assert code == 0
    pool = [line for line in out.splitlines() if line.startswith("VM Const[")]
    # FoldConstant made the 3x4 tensor: TVM shows no values for it, rvmdbg adds the first four
    assert ("VM Const[2]: NDArray[(3,4),float32,(1,0)] on device index 0  "
            "// 1.5, 1.5, 1.5, 1.5, ...") in pool
    kernels = [line for line in out.splitlines() if line.startswith("VM PackedFunc[")]
    assert kernels == ["VM PackedFunc[0]: vm_mod_fused_add"]


def test_kernel_names_follow_tvm_0_18(capsys, write):
    from rvmdbg.vm.compiler import kernel_name
    from rvmdbg.relay.parser import parse_expr
    fn = parse_expr("fn (%p0: Tensor[(2), float32], Primitive=1) { nn.relu(exp(%p0)) }")
    assert kernel_name(fn) == "vm_mod_fused_exp_nn_relu"
    fn.attrs["ShapeFunc"] = 1
    assert kernel_name(fn) == "vm_mod_shape_func_exp_nn_relu"
    ext = parse_expr('fn (%p0: float32, Primitive=1, Compiler="ccompiler", '
                     'global_symbol="tvmgen_default_ccompiler_main_0") { exp(%p0) }')
    assert kernel_name(ext) == "tvmgen_default_ccompiler_main_0"
