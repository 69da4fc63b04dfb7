"""Painting a stop on the debugger screen: after each stop `show_stop()` reads the session
once (frames, dependencies, breakpoints, heap) and hands each pane what it shows; panes never
call the session themselves. `StopPainting` is a mixin of `DebuggerScreen`.
"""
from __future__ import annotations

from pathlib import Path

from rvmdbg.tui.listing import DepRead
from rvmdbg.tui.stops import error_text, event_note, history_line, pc_note, stop_line
from rvmdbg.tui.summary import value_summary
from rvmdbg.i18n import _


class StopPainting:
    """What each pane shows at a stop and for the selected frame, for `DebuggerScreen`."""

    def show_stop(self, event, label: str) -> None:
        s = self.session
        if event is None and label != "start":
            # a command ran (its output is elsewhere): the stop is the session's last one
            event = getattr(s, "last_event", None)
        self.shown_event = event
        self.frames = list(s.frames())
        self.selected_depth = len(self.frames) - 1 if self.frames else None
        self.pane("stack").set_frames(
            self.frames, self.selected_depth if self.selected_depth is not None else 0)
        self.show_selected_frame()
        self.refresh_breakpoints()
        self.status.set_stop(*stop_line(s, event, self.program.exe))
        self.status.set_history(history_line(s, self.glyphs))
        error = getattr(s, "error", None)
        self.status.set_message(_("error: {message}").format(message=error_text(error)) if error is not None else
                                event_note(event), warning=error is not None)
        self.draw_cycle()

    def show_selected_frame(self) -> None:
        s = self.session
        frame = self.selected_frame()
        registers = self.pane("registers")
        listing = self.listing
        source = self.source
        g = self.glyphs
        error = getattr(s, "error", None)
        if frame is None:
            listing.set_location(None)
            listing.set_deps([], ())
            if s.finished and error is None:
                registers.clear(_("finished: result = {value}").format(value=value_summary(s.result, 200, g.ellipsis)))
            elif error is not None:
                registers.clear(_("stopped by an error: {error}").format(error=error_text(error)))
            else:
                registers.clear(_("no frames"))
            if source is not None:
                source.set_current(None)
            self.heap_stale = True
            self.refresh_heap()
            return
        top = self.selected_depth == len(self.frames) - 1
        kind = "top" if top else "caller"
        error_note = ""
        if top and error is not None:
            kind = "error"
            error_note = error_text(error)
        listing.show_function(frame.func_index)
        note = pc_note(frame, self.program.exe) if top else ""
        listing.set_location(frame.pc, kind, error_note, note)
        reads: tuple = ()
        writes: tuple = ()
        if top:
            dep_reads, writes = self.listing_deps()
            listing.set_deps(dep_reads, writes)
            reads = tuple(r.register for r in dep_reads)
        else:
            listing.set_deps([], ())
        self.mark_listing_breakpoints()
        changed: set = set()
        if top:
            try:
                changed = set(s.changed_registers())
            except Exception:
                changed = set()
        fn = self.program.exe.functions[frame.func_index]
        frame_no = len(self.frames) - 1 - self.selected_depth
        title = _("Registers #{n}").format(n=frame_no) + f" @{fn.name}"
        sizes = self.listing.register_sizes
        if self.numbering == "reused" and sizes and fn.name in sizes:
            title += " " + _("(reused: {reused} of {tvm})").format(reused=sizes[fn.name][1],
                                                                  tvm=sizes[fn.name][0])
        registers.set_frame(frame.registers, changed, reads, writes, len(fn.params),
                            title=title)
        if source is not None:
            span = self.program.exe.span_at(frame.func_index, frame.pc)
            if span is not None and self._show_source_file(span.file):
                source.set_current(span.line, kind, span, error_note)
            else:
                source.set_current(None)
        self.heap_stale = True
        self.refresh_heap()
        if "constants" in self._pane_ids_present():
            self.pane("constants").set_instruction(frame.instruction)

    def _pane_ids_present(self) -> tuple:
        return tuple(p for p, _ in getattr(self, "state_panes", ()))

    def _show_source_file(self, file: str | None) -> bool:
        """Put `file` in the source pane (the program's, or the prelude's when the pc is
        there); False when it cannot be read."""
        source = self.source
        if file is None:
            return False
        if file != source.file:
            if file == self.program.source_file:
                source.show_file(file)
            else:
                # the text the executable carries (never a path read from disk: a saved
                # executable could name any path)
                text = self.program.exe.source_of(file)
                if text is None:
                    return False
                source.show_file(file, text, Path(file).name)
            self.mark_listing_breakpoints()
        return True

    def listing_deps(self) -> tuple[list[DepRead], tuple[int, ...]]:
        try:
            deps = self.session.deps()
        except Exception:
            return [], ()
        exe = self.program.exe
        reads = []
        for r in getattr(deps, "reads", ()):
            func = getattr(r, "write_func", None)
            if isinstance(func, str):
                try:
                    func = exe.func_index(func)
                except KeyError:
                    func = None
            reads.append(DepRead(r.register, func, getattr(r, "write_pc", None),
                                 getattr(r, "write_step", None)))
        return reads, tuple(getattr(deps, "writes", ()))

    def refresh_heap(self) -> None:
        heap = self.pane("heap")
        if not self.heap_stale or self.session is None or not heap.display:
            return
        if heap.has_class("-tab-hidden") and self.narrow:
            return  # rebuilt when it is shown
        self.heap_stale = False
        frame = self.selected_frame()
        if frame is None:
            s = self.session
            if s.finished and s.error is None:
                from rvmdbg.tui.summary import is_heap_object
                if is_heap_object(s.result):
                    heap.set_registers([s.result], title=_("Heap: the result"))
                    return
            heap.show_message(_("no frame"))
            return
        frame_no = len(self.frames) - 1 - self.selected_depth
        # the registers pane shows the same frame and knows its heap objects already
        heap.set_registers(frame.registers, title=_("Heap #{n}").format(n=frame_no) + f" @{frame.func_name}",
                           heap_regs=self.pane("registers").heap_registers())
