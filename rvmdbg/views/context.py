"""What the three teaching views look at: the typed module, its pass stages, the executable
and (once running) the debug session.

A `ViewContext` is built from what the debugger already holds (`from_program` takes the
screen's `DebugProgram` and `DebugSession`); the pass stages are recomputed on first use,
because the debugger compiles without keeping them. The executable shown is always the one
the session runs, so pcs and spans agree with the debugger.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from rvmdbg.values import copy_values

_STAGES_LOCK = threading.Lock()


@dataclass
class ViewContext:
    module: object | None            # the type-checked Relay module (None: executable only)
    exe: object                      # rvmdbg.vm.executable.Executable the session runs
    session: object | None = None    # rvmdbg.debug.DebugSession, once started
    source_text: str | None = None
    source_file: str | None = None   # the span file name of the program's own lines
    entry: str = "main"
    name: str = "<program>"
    names: object = None             # the program kind's debug.names.NameTable (ONNX nodes)
    # view 2's figures when they are given rather than measured (tests, screenshots)
    measurements: dict | None = None     # executor name -> ExecutorMeasurement
    cost_samples: list | None = None     # CostSamples of the cost model's workload
    cost_workload: object = None         # its costmodel.ProgramWorkload (what was measured)
    _stages: list | None = field(default=None, repr=False)
    _stage_error: str | None = field(default=None, repr=False)

    @classmethod
    def from_program(cls, program, session=None) -> "ViewContext":
        """From the screen's `DebugProgram` (path, exe, module, source) and its session."""
        return cls(module=program.module, exe=program.exe, session=session,
                   source_text=program.source_text, source_file=program.source_file,
                   entry=program.entry, name=program.name,
                   names=getattr(program, "names", None))

    @classmethod
    def from_text(cls, text: str, filename: str = "<input>", entry: str = "main",
                  session_args=None) -> "ViewContext":
        """Load, check and compile a program from text (tests, scripts); with
        `session_args`, also start a `DebugSession` on them."""
        from rvmdbg.relay.loader import load_module
        from rvmdbg.relay.typecheck import check_module
        from rvmdbg.vm.compiler import compile_stages
        module = check_module(load_module(text, filename))
        stages, exe = compile_stages(module)
        ctx = cls(module=module, exe=exe, source_text=text, source_file=filename, entry=entry,
                  name=filename)
        ctx._stages = stages
        if session_args is not None:
            from rvmdbg.debug import DebugSession
            ctx.session = DebugSession(exe, session_args, entry=entry)
        return ctx

    @property
    def stages(self) -> list:
        """The pipeline's stages (Input first), or [] when there is no module or the passes
        fail (`stage_error` says why)."""
        if self._stages is None:
            with _STAGES_LOCK:   # the screen computes them in a worker thread
                if self._stages is None:
                    stages: list = []
                    if self.module is not None:
                        try:
                            from rvmdbg.vm.compiler import compile_stages
                            stages, _ = compile_stages(self.module)
                        except Exception as exc:  # shown in the view; the debugger runs on
                            self._stage_error = f"{type(exc).__name__}: {exc}"
                    self._stages = stages
        return self._stages

    @property
    def stages_ready(self) -> bool:
        """The stages were computed (or there are none to compute)."""
        return self._stages is not None or self.module is None

    @property
    def stage_error(self) -> str | None:
        self.stages  # noqa: B018 - computing them is what sets the error
        return self._stage_error

    def session_args(self) -> list | None:
        """The entry's arguments the session was started on (fresh copies), or None."""
        s = self.session
        if s is None:
            return None
        return s.arguments()

    def run_exe(self):
        """The executable to run fresh copies of the program on: the one the session was
        made with (the session's own copy has history journaling wrapped around kernels)."""
        s = self.session
        return getattr(s, "original_exe", None) or self.exe


copy_args = copy_values  # the views' name for it


__all__ = ["ViewContext", "copy_args"]
