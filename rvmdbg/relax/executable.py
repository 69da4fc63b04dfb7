"""Reading a Relax `VMExecutable`: the function table and constant pool from the serialized
form (`ex.mod.write_to_file(path, "")`, TVM's src/runtime/vm/executable.cc layout), the
instructions from `ex.as_text()`; and the four instructions (`Call`, `Ret`, `Goto`, `If`)
as `rvmdbg.vm.bytecode.Instruction`s, so the listing, the jump arrows and the read and write
sets work on them as on the Relay VM's.

Nothing here imports tvm: the bytes and the text are read with `struct` and regular
expressions; `RelaxExecutable.tvm_exe` keeps TVM's own object for the machine.
"""
from __future__ import annotations

import struct

import numpy as np

from rvmdbg.i18n import _
from rvmdbg.relax.isa import (  # noqa: F401  (re-exported: the reader's public names)
    FUNC_PACKED, FUNC_TIR, FUNC_VM, DType, Instruction, Operand, RCall, RelaxFormatError, RGoto,
    RIf, RRet, Shape, parse_instruction,
)
from rvmdbg.vm.executable import Executable, VMFunction

MAGIC = 0xD225DE2F4214151E   # the header word of a serialized Relax VM executable
# The constant pool's type indexes (TVM FFI type indexes)
T_INT, T_FLOAT, T_DTYPE, T_STR, T_SHAPE, T_TENSOR = 1, 3, 5, 65, 69, 70
TENSOR_MAGIC = 0xDD5E40F096B4A13F
DL_CODES = {0: "int", 1: "uint", 2: "float", 6: "bool"}


class GlobalInfo:
    """One entry of the function table: a VM function (`kind == FUNC_VM`) or a packed
    function (a kernel or builtin) the bytecode calls by name."""

    __slots__ = ("kind", "name", "start", "end", "num_args", "register_file_size", "params")

    def __init__(self, kind, name, start, end, num_args, register_file_size, params):
        self.kind, self.name, self.start, self.end = kind, name, start, end
        self.num_args, self.register_file_size, self.params = num_args, register_file_size, params


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise RelaxFormatError(_("serialized executable: truncated at byte {pos}").format(pos=self.pos))
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out

    def u64(self) -> int:
        return self.take("<Q")[0]

    def i64(self) -> int:
        return self.take("<q")[0]

    def string(self) -> str:
        n = self.u64()
        if self.pos + n > len(self.data):
            raise RelaxFormatError(_("serialized executable: truncated at byte {pos}").format(pos=self.pos))
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s.decode("utf-8", "replace")

    def dtype(self) -> str:
        code, bits, lanes = self.take("<BBH")
        if code not in DL_CODES:
            raise RelaxFormatError(_("serialized executable: unknown data type code {code} at byte {pos}")
                                   .format(code=code, pos=self.pos - 4))
        if code == 6:
            return "bool"
        base = f"{DL_CODES[code]}{bits}"
        return base if lanes == 1 else f"{base}x{lanes}"


def read_serialized(data: bytes) -> tuple[list[GlobalInfo], list]:
    """(function table, constant pool) of a serialized Relax VM executable."""
    r = _Reader(data)
    if r.u64() != MAGIC:
        raise RelaxFormatError(_("not a serialized Relax VM executable (bad magic number)"))
    r.string()   # TVM's version
    table = []
    for _i in range(r.u64()):
        kind = r.take("<i")[0]
        name = r.string()
        start, end, num_args, regs = r.i64(), r.i64(), r.i64(), r.i64()
        params = [r.string() for _p in range(r.u64())]
        table.append(GlobalInfo(kind, name, start, end, num_args, regs, params))
    scopes = r.u64()
    for _s in range(scopes):   # memory scopes of non-default devices: index and name
        r.i64()
        r.string()
    constants = []
    for _c in range(r.u64()):
        at = r.pos
        tag = r.take("<i")[0]
        if tag == T_DTYPE:
            constants.append(DType(r.dtype()))
        elif tag == T_STR:
            constants.append(r.string())
        elif tag == T_SHAPE:
            constants.append(Shape(r.i64() for _d in range(r.u64())))
        elif tag == T_INT:
            constants.append(r.i64())
        elif tag == T_FLOAT:
            constants.append(r.take("<d")[0])
        elif tag == T_TENSOR:
            constants.append(_read_tensor(r))
        else:
            raise RelaxFormatError(_("serialized executable: constant {i} has a type this reader "
                                     "does not know (index {tag}) at byte {pos}").format(
                                         i=len(constants), tag=tag, pos=at))
    return table, constants


def _read_tensor(r: _Reader) -> np.ndarray:
    if r.u64() != TENSOR_MAGIC:
        raise RelaxFormatError(_("serialized executable: bad tensor header at byte {pos}").format(pos=r.pos - 8))
    r.u64()                 # reserved
    r.take("<ii")           # device type and id
    ndim = r.take("<i")[0]
    dtype = r.dtype()
    shape = tuple(r.i64() for _d in range(ndim))
    nbytes = r.i64()
    raw = r.data[r.pos:r.pos + nbytes]
    r.pos += nbytes
    np_dtype = np.dtype("bool" if dtype == "bool" else dtype)
    if len(raw) != nbytes or np.prod(shape, dtype=np.int64) * np_dtype.itemsize != nbytes:
        raise RelaxFormatError(_("serialized executable: tensor data of the wrong size at byte {pos}")
                               .format(pos=r.pos))
    return np.frombuffer(raw, dtype=np_dtype.newbyteorder("<")).astype(np_dtype).reshape(shape)


# ------------------------------------------------------------------ instructions

def parse_listing(text: str) -> dict[str, list[Instruction]]:
    """The instructions of each VM function in an `as_text()` listing."""
    functions: dict[str, list[Instruction]] = {}
    current = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("@"):
            head = line[1:].rstrip()
            if head.endswith(":"):
                current = functions.setdefault(head[:-1], [])
            else:
                current = None   # `@name packed_func;`: a kernel or builtin, no code
            continue
        if current is None:
            raise RelaxFormatError(_("listing line {n}: an instruction outside a function").format(n=n))
        current.append(parse_instruction(line, f"listing line {n}"))
    return functions


class RelaxExecutable(Executable):
    """A Relax VM executable as rvmdbg reads it: `functions` are the VM functions (index as in
    `functions`, not TVM's global table), `constants` the pool (NumPy arrays, `Shape`,
    `DType`, strings, numbers), `table` TVM's whole function table, `tvm_exe` TVM's own
    `VMExecutable` (its kernels are called from it)."""

    register_prefix = "%"
    kind = "relax"

    def __init__(self, table, constants, code: dict, tvm_exe=None, source_text=None,
                 source_name=None):
        functions = []
        for g in table:
            if g.kind == FUNC_VM:
                instrs = code.get(g.name)
                if instrs is None or len(instrs) != g.end - g.start:
                    raise RelaxFormatError(_("function @{name}: the listing has {n} instructions, the "
                                             "function table {m}").format(
                                                 name=g.name, n=len(instrs or ()), m=g.end - g.start))
                functions.append(VMFunction(g.name, g.params, g.register_file_size, instrs))
        super().__init__(functions, constants, [], None, source_text, source_name)
        vm_names = frozenset(g.name for g in table if g.kind == FUNC_VM)
        for fn in functions:
            for ins in fn.instructions:
                if type(ins) is RCall:
                    ins.mark(vm_names)
        self.table = list(table)
        self.tvm_exe = tvm_exe
        self.journal = None
        # {function: [(dtype, shape with None for a symbolic dim) or None, ...]}: what ARGs become
        self.param_types: dict = {}

    def called_names(self) -> list[str]:
        """The kernels and builtins the bytecode calls by name (TVM's function table order):
        what `break NAME` stops at the Calls of."""
        return [g.name for g in self.table if g.kind != FUNC_VM]

    def journaled(self, journal):
        """A shallow copy whose machine journals its in-place tensor writes to `journal` (the
        session's `RefJournal`, which the history rewinds with its checkpoints)."""
        import copy
        clone = copy.copy(self)
        clone.journal = journal
        return clone

    def machine(self, limits=None):
        from rvmdbg.relax.machine import RelaxMachine
        return RelaxMachine(self, limits)

    def listing(self) -> str:
        """The program in the layout of TVM's `as_text()` (the same text, line for line)."""
        out = []
        by_name = {f.name: f for f in self.functions}
        for g in self.table:
            if g.kind == FUNC_VM:
                out.append(f"@{g.name}:\n")
                out.extend(f"  {ins.text()}\n" for ins in by_name[g.name].instructions)
            else:
                out.append(f"@{g.name} packed_func;\n")
            out.append("\n")
        return "".join(out)

    def bytecode(self, names: bool = False) -> str:
        return self.listing()

    def constants_text(self, preview: int = 0) -> str:
        lines = []
        for i, c in enumerate(self.constants):
            if isinstance(c, np.ndarray):
                text = f"R.const({c.tolist()!r}, {str(c.dtype)!r})" if c.size <= 10 else \
                    f"tensor{list(c.shape)} {c.dtype}"
            elif isinstance(c, DType):
                text = f"dtype {c}"
            else:
                text = repr(c)
            lines.append(f"c[{i}] = {text}")
        return "\n".join(lines) + ("\n" if lines else "")


def from_tvm(tvm_exe, source_text=None, source_name=None, scratch_dir=None) -> RelaxExecutable:
    """Read TVM's `VMExecutable` (serialized to a temporary file, and its `as_text()`)."""
    import os
    import tempfile
    with tempfile.TemporaryDirectory(dir=scratch_dir) as d:
        path = os.path.join(d, "exe.vmexec")
        tvm_exe.mod.write_to_file(path, "")
        with open(path, "rb") as f:
            data = f.read()
    table, constants = read_serialized(data)
    code = parse_listing(tvm_exe.as_text())
    return RelaxExecutable(table, constants, code, tvm_exe, source_text, source_name)


__all__ = ["RelaxExecutable", "RelaxFormatError", "RCall", "RRet", "RGoto", "RIf", "Operand",
           "DType", "Shape", "GlobalInfo", "read_serialized", "parse_listing", "parse_instruction",
           "from_tvm", "MAGIC"]
