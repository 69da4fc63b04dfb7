"""The bytecode listing of one function: addresses, TVM text, pc, breakpoints and arrows.

A row, left to right: breakpoint marker, pc marker, address, the source-line colour bar,
the dependency gutter (for the instruction at the pc: an arrow from each register it reads to
the instruction that last wrote it), the jump gutter (If/Goto targets in lanes, the edges
touching the pc drawn heavy), the instruction in TVM's text form with callees, kernels and
constructors named, and notes (what the pc reads and writes, the error that stopped it).

swap?: `m` marks an instruction; wherever the cursor then goes, the listing says whether the
two may trade places and draws each dependence that forbids it as an arrow in the dependency
gutter (instead of the pc's reads), with the register and kind noted on its rows
(`deps.swap_verdict`: a static fact of the bytecode, not of the run).

Built on the Line API (`LinePane`): per-function data is computed once, each row is rendered
once per state and cached, and moving the pc repaints only the rows whose state changed, so
a 20,000-instruction function steps and scrolls as fast as a short one.
"""
from __future__ import annotations

from rich.cells import cell_len

import re
from typing import NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive

from rvmdbg.debug.deps import swap_verdict
from rvmdbg.debug.numbering import LiveRanges

from rvmdbg.tui.arrows import MAX_DEP_LANES, MAX_JUMP_LANES, Edge, GutterLayout, jump_edges
from rvmdbg.tui.line_pane import LinePane
from rvmdbg.tui.links import PALETTE_SIZE, SourceLinks
from rvmdbg.i18n import NP_, N_, _

# The dependency gutter has a fixed width so a stop never shifts the columns (and never
# invalidates every cached row): two lanes and the head column.
DEP_LANES = min(2, MAX_DEP_LANES)
DEP_WIDTH = DEP_LANES + 1

# registers: TVM's `$3`, and the MiniVM's `r3`
_TOKEN = re.compile(r"(?P<comment>//.*$)|(?P<reg>\$\d*|\br\d+\b)|(?P<ref>(?:VMFunc|PackedFunc|Const)\[\d+\])"
                    r"|(?P<num>-?\d+)|(?P<word>[A-Za-z_][\w.]*)|(?P<other>.)")
_REG = re.compile(r"\$(\d+)")


class DepRead(NamedTuple):
    """A register the pc instruction reads and where its value came from."""

    register: int
    writer_func: int | None   # function index of the writing instruction (None: an argument)
    writer_pc: int | None
    writer_step: int | None


# Live ranges beside the listing (reused numbering): one column per register, at most this many.
MAX_LIVE_COLUMNS = 24


class FunctionListing:
    """Everything about one function's rows that does not change while the program runs.
    With `live`, each register's live range as a column of bars (`numbering.LiveRanges`)."""

    def __init__(self, exe, func_index: int, links: SourceLinks | None, live: bool = False):
        fn = exe.functions[func_index]
        self.func_index = func_index
        self.name = fn.name
        names = exe.function_names()
        kernels = exe.kernel_names()
        self.instructions = fn.instructions
        texts = []
        for pc, ins in enumerate(fn.instructions):
            text = ins.text(names, kernels)
            con = exe.adt_constructor.get((func_index, pc))
            if con is not None:
                text += f"  // {con}"
            texts.append(text)
        self.texts = texts
        self.address_width = max(2, len(str(len(texts) - 1)))
        self.jumps = GutterLayout(jump_edges(fn.instructions), MAX_JUMP_LANES)
        self.jump_targets = {pc: ins.jump_targets(pc) for pc, ins in enumerate(fn.instructions)
                             if ins.is_jump}
        if links is not None:
            line_at, colour_of_line = links.line_at, links.colour_of_line
            self.lines = [line_at.get((func_index, pc)) for pc in range(len(texts))]
            self.colours = [None if line is None else colour_of_line[line] for line in self.lines]
        else:
            self.colours = [None] * len(texts)
            self.lines = [None] * len(texts)
        self.live = LiveRanges(fn, exe.kernels) if live else None
        self.live_columns = min(fn.register_file_size, MAX_LIVE_COLUMNS) if live else 0
        self.text_column = (2 + self.address_width + 1 + 1 + DEP_WIDTH + self.jumps.width + 1
                            + (self.live_columns + 1 if live else 0))
        # printable ASCII (nearly every instruction) is one cell a character: no lookups
        widest = max((len(t) if t.isascii() and t.isprintable() else cell_len(t) for t in texts),
                     default=0)
        self.width = self.text_column + widest + 24


class BytecodeListing(LinePane):
    """The listing pane: one function at a time, following the selected frame."""

    MARK_COMPONENT = "listing--pc"  # the pc / current line

    title = N_("Bytecode")

    COMPONENT_CLASSES = LinePane.COMPONENT_CLASSES | {
        "listing--address", "listing--opcode", "listing--register", "listing--number",
        "listing--reference", "listing--comment", "listing--pc", "listing--pc-marker",
        "listing--caller", "listing--error", "listing--breakpoint", "listing--breakpoint-off",
        "listing--jump", "listing--jump-active", "listing--read", "listing--write",
        "listing--linked", "listing--note", "listing--swap-mark", "listing--swap-ok",
        "listing--swap-no", "listing--live",
    } | {f"listing--link-{i}" for i in range(PALETTE_SIZE)}

    BINDINGS = [
        Binding("b", "screen.toggle_breakpoint", N_("Break"), tooltip=N_("Toggle a breakpoint on this instruction"),
                id="break"),
        Binding("t", "screen.run_to_cursor", N_("Run to"), tooltip=N_("Run to this instruction"), id="run-to"),
        Binding("w", "screen.watch_cursor", N_("Watch"), tooltip=N_("Watch the register this instruction writes"),
                id="watch"),
        Binding("left_square_bracket", "screen.show_function(-1)", N_("Prev fn"), show=False,
                tooltip=N_("Show the previous function's bytecode"), id="previous-function"),
        Binding("right_square_bracket", "screen.show_function(1)", N_("Next fn"), show=False,
                tooltip=N_("Show the next function's bytecode"), id="next-function"),
        Binding("full_stop", "screen.show_pc", N_("Show pc"), show=False,
                tooltip=N_("Back to the selected frame's function and pc"), id="show-pc"),
        Binding("at", "screen.command('list @')", N_("Function"), show=False,
                tooltip=N_("Jump to any function: `list @` on the command line, Tab completes"),
                id="jump-function"),
        Binding("m", "mark_swap", N_("Swap?"), show=False,
                tooltip=N_("Mark this instruction for swap?: moving to another shows whether the "
                        "two may trade places, and the dependence that forbids it (m again "
                        "on the mark clears it)"), id="swap-mark"),
    ]

    class SwapShown(Message):
        """The swap? verdict between the mark and the cursor changed (None: no mark)."""

        def __init__(self, listing: "BytecodeListing", verdict) -> None:
            super().__init__()
            self.listing = listing
            self.verdict = verdict

    pc: reactive[int | None] = reactive(None, repaint=False, init=False)

    def __init__(self, exe, links: SourceLinks | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.exe = exe
        self.prefix = getattr(exe, "register_prefix", "$")   # how the program names registers
        self.links = links
        self._functions: dict[int, FunctionListing] = {}
        self.listing: FunctionListing | None = None
        self.pc_kind = "top"          # "top", "caller" (a frame further out) or "error"
        self.error_note = ""
        self.pc_note = ""             # e.g. the closure an invoke_closure is about to call
        self.breakpoints: dict[int, str] = {}   # pc -> "on", "off" or "cond" (shown function)
        self.linked: frozenset[int] = frozenset()
        self._deps: GutterLayout | None = None
        self._dep_reads: list[DepRead] = []
        self._dep_writes: tuple[int, ...] = ()
        self._writer_notes: dict[int, list[int]] = {}
        self._dep_range: tuple[int, int] | None = None
        self._dep_generation = 0
        self._active: frozenset[int] = frozenset()
        self.swap_mark: int | None = None     # the pc `m` marked (in the shown function)
        self.swap = None                      # the SwapVerdict between the mark and the cursor
        self._swap_layout: GutterLayout | None = None
        self._swap_notes: dict[int, list[str]] = {}
        self._swap_range: tuple[int, int] | None = None
        self._swap_generation = 0
        self.show_live = False                # live-range bars (the reused numbering)
        self.register_sizes: dict | None = None   # function -> (TVM's size, reused size)

    # ------------------------------------------------------------ content

    def set_exe(self, exe, live: bool = False, register_sizes: dict | None = None) -> None:
        """Show the program in another register numbering (same functions and pcs): its
        instruction text, and with `live` each register's live range beside it."""
        fi, cursor = self.func_index, self.cursor
        self.exe = exe
        self.show_live = live
        self.register_sizes = register_sizes
        self._functions = {}
        self.listing = None
        self.invalidate()
        if fi is not None:
            self.show_function(fi, cursor)

    @property
    def func_index(self) -> int | None:
        return self.listing.func_index if self.listing is not None else None

    def function_listing(self, func_index: int) -> FunctionListing:
        fl = self._functions.get(func_index)
        if fl is None:
            fl = self._functions[func_index] = FunctionListing(self.exe, func_index, self.links,
                                                               live=self.show_live)
        return fl

    def show_function(self, func_index: int, cursor: int | None = None) -> None:
        """Switch to a function (no-op when shown); the cursor goes to `cursor` if given."""
        if self.listing is None or self.listing.func_index != func_index:
            self.listing = self.function_listing(func_index)
            self.set_pc_quietly(None)
            self._set_deps([], ())
            self.breakpoints = {}
            self.linked = frozenset()
            self._set_swap(None)
            fn = self.exe.functions[func_index]
            self.border_title = f"{_(self.title)} @{fn.name}"
            if self.listing.live is not None:
                cols = self.listing.live_columns
                self.border_title += ("   " + _("live ranges of $0..${last}").format(last=cols - 1)
                                      + (" " + _("(of {n})").format(n=fn.register_file_size)
                                         if cols < fn.register_file_size else ""))
            self.border_subtitle = f"VMFunc[{func_index}] " + _("{n} instrs").format(n=len(fn.instructions))
            sizes = (self.register_sizes or {}).get(fn.name)
            if sizes is not None:
                self.border_subtitle += (f" {self.glyphs.separator} " + _("registers {tvm} {arrow} {reused} reused").format(
                    tvm=sizes[0], arrow=self.glyphs.arrow_head, reused=sizes[1]))
            # cached rows stay: their keys carry the function, so coming back is cheap.
            # The width only grows: a horizontal scroll range that comes and goes with the
            # function shows and hides a scrollbar, which lays out the whole screen.
            width = max(self.listing.width, self.virtual_size.width)
            self.set_lines(len(self.listing.texts), width, clear=False)
            self.refresh()
            self.set_cursor(0 if cursor is None else cursor, quiet=True, center=cursor is not None)
            self.scroll_to(x=0, animate=False, immediate=True)
        elif cursor is not None:
            self.set_cursor(cursor, quiet=True)

    def set_pc_quietly(self, pc: int | None) -> None:
        self.set_reactive(BytecodeListing.pc, pc)
        self._active = frozenset()

    # ------------------------------------------------------------ the pc and its arrows

    def set_location(self, pc: int | None, kind: str = "top", error_note: str = "",
                     pc_note: str = "", follow: bool = True) -> None:
        """Mark the pc of the shown function (None: the selected frame is elsewhere)."""
        notes_changed = (kind, error_note, pc_note) != (self.pc_kind, self.error_note, self.pc_note)
        self.pc_kind, self.error_note, self.pc_note = kind, error_note, pc_note
        if pc == self.pc:
            if notes_changed:
                self.refresh_content_line(pc)
        else:
            self.pc = pc
        if follow and pc is not None:
            self.set_cursor(pc, quiet=True, ahead=True)
            # again once the layout has caught up: right after a switch of function the
            # scroll range is still the old function's, and the scroll was cut short by it
            self.call_after_refresh(self.scroll_to_line, pc, False, True)

    def watch_pc(self, old: int | None, new: int | None) -> None:
        listing = self.listing
        if listing is None:
            return
        old_active = self._active
        self._active = listing.jumps.active_edges(new)
        self.refresh_content_line(old)
        self.refresh_content_line(new)
        # rows crossed by an arrow that starts or stops being heavy
        for i in old_active ^ self._active:
            e = listing.jumps.edges[i]
            self.refresh_content_lines(min(e.src, e.dst), max(e.src, e.dst))

    def set_deps(self, reads: list[DepRead], writes: tuple[int, ...]) -> None:
        """The data dependencies of the instruction at the pc (reads and writes)."""
        old_range = self._dep_range
        self._set_deps(reads, writes)
        if old_range is not None:
            self.refresh_content_lines(*old_range)
        if self._dep_range is not None:
            self.refresh_content_lines(*self._dep_range)

    def _set_deps(self, reads: list[DepRead], writes: tuple[int, ...]) -> None:
        self._dep_generation += 1
        self._dep_reads = list(reads)
        self._dep_writes = tuple(writes)
        self._writer_notes = {}
        pc = self.pc
        fi = self.func_index
        edges: list[Edge] = []
        if pc is not None and fi is not None:
            for r in reads:
                if r.writer_func == fi and r.writer_pc is not None:
                    self._writer_notes.setdefault(r.writer_pc, []).append(r.register)
            for writer_pc, regs in self._writer_notes.items():
                if writer_pc != pc:
                    edges.append(Edge(writer_pc, pc, " ".join(f"{self.prefix}{x}" for x in regs)))
        self._deps = GutterLayout(edges, DEP_LANES, precompute=False) if edges else None
        lines = [e.src for e in edges] + list(self._writer_notes) + ([pc] if pc is not None else [])
        self._dep_range = (min(lines), max(lines)) if lines else None

    def set_breakpoints(self, marks: dict[int, str]) -> None:
        changed = set(marks.items()) ^ set(self.breakpoints.items())
        self.breakpoints = dict(marks)
        for pc in {pc for pc, _ in changed}:
            self.refresh_content_line(pc)

    def set_linked(self, pcs) -> None:
        """Highlight the instructions of the source line under the source pane's cursor."""
        new = frozenset(pcs)
        old, self.linked = self.linked, new
        for pc in old ^ new:
            self.refresh_content_line(pc)

    # ------------------------------------------------------------ rows

    def line_state(self, index: int) -> tuple:
        pc = self.pc
        is_pc = index == pc
        dep_rng = self._dep_range
        in_deps = dep_rng is not None and dep_rng[0] <= index <= dep_rng[1]
        active = self._active
        jump_hot = (self.listing.jumps.edges_on(index) & active) if active else ()
        return (
            self.listing.func_index,
            self.pc_kind if is_pc else "",
            (self.error_note, self.pc_note) if is_pc else (),
            self.breakpoints.get(index, ""),
            index in self.linked,
            tuple(sorted(jump_hot)),
            self._dep_generation if in_deps else 0,
            self._swap_generation if (self._swap_range is not None
                                      and self._swap_range[0] <= index <= self._swap_range[1]) else 0,
        )

    def line_text(self, index: int) -> str:
        if self.listing is None:
            return ""
        return f"{index}: {self.listing.texts[index]}"

    def render_full_line(self, index: int, cursor: str):
        listing = self.listing
        g = self.glyphs
        st = self.style
        is_pc = index == self.pc
        base = self.line_base("listing", self.pc_kind if is_pc else None, index in self.linked,
                              cursor)
        segs: list[Segment] = []
        add = segs.append

        # breakpoint and pc markers
        add(self.breakpoint_segment(self.breakpoints.get(index, ""), base,
                                    "listing--breakpoint", "listing--breakpoint-off"))
        if is_pc:
            mark = {"error": g.error, "caller": g.caller_pc}.get(self.pc_kind, g.pc)
            add(Segment(mark, base + st("listing--pc-marker")))
        else:
            add(Segment(" ", base))
        address = base + st("listing--address")
        if cursor and is_pc:
            address = address + Style(reverse=True)
        add(Segment(f"{index:>{listing.address_width}}", address))
        add(Segment(" ", base))
        colour = listing.colours[index]
        if colour is not None:
            add(Segment(g.link_bar, base + st(f"listing--link-{colour}")))
        else:
            add(Segment(" ", base))

        # dependency gutter (fixed width), then the jump gutter; drawn only on the rows of
        # its range (the others are blank, and the rows' keys count them out of it)
        deps = self._deps
        swap_rows, dep_rows = self._swap_range, self._dep_range
        if self.swap_mark is not None:
            # while a swap? mark is set the gutter shows what forbids the swap
            if self._swap_layout is not None and swap_rows[0] <= index <= swap_rows[1]:
                runs = self._swap_layout.line(index, g.light, None, g.dep_head)
                text = "".join(t for t, _ in runs)
                add(Segment(f"{text:>{DEP_WIDTH}}"[-DEP_WIDTH:], base + st("listing--swap-no")))
            else:
                add(Segment(" " * DEP_WIDTH, base))
        elif deps is not None and dep_rows is not None and dep_rows[0] <= index <= dep_rows[1]:
            runs = deps.line(index, g.dashed, None, g.dep_head)
            text = "".join(t for t, _ in runs)
            add(Segment(f"{text:>{DEP_WIDTH}}"[-DEP_WIDTH:], base + st("listing--read")))
        else:
            add(Segment(" " * DEP_WIDTH, base))
        jumps = listing.jumps
        if jumps.width:
            hot = self._active & jumps.edges_on(index) if self._active else frozenset()
            for text, is_hot in jumps.line(index, g.light, g.heavy, g.arrow_head, hot):
                add(Segment(text, base + st("listing--jump-active" if is_hot else "listing--jump")))
        if listing.live is not None:
            add(Segment(" " + self._live_cells(index), base + st("listing--live")))
        add(Segment(" ", base))

        # the instruction
        reads = {r.register for r in self._dep_reads} if is_pc else ()
        writes = set(self._dep_writes) if is_pc else ()
        self._instruction_segments(listing.texts[index], base, reads, writes, segs)

        # notes
        note = base + st("listing--note")
        if index in self._writer_notes:
            regs = " ".join(f"{self.prefix}{r}" for r in self._writer_notes[index])
            add(Segment(f"  {g.read} {regs}", base + st("listing--read")))
        if is_pc:
            outside = [r for r in self._dep_reads
                       if r.writer_pc is None or r.writer_func != listing.func_index]
            if outside:
                parts = []
                for r in outside:
                    if r.writer_func is None or r.writer_pc is None:
                        parts.append(f"{self.prefix}{r.register} " + _("(argument)"))
                    else:
                        parts.append(f"{self.prefix}{r.register} " + _("from @{func}:{pc}").format(
                            func=self.exe.functions[r.writer_func].name, pc=r.writer_pc))
                add(Segment(f"  {g.read} " + ", ".join(parts), base + st("listing--read")))
            if self._dep_writes:
                add(Segment(f"  {g.write} " + " ".join(f"{self.prefix}{w}" for w in self._dep_writes),
                            base + st("listing--write")))
            if self.pc_note:
                add(Segment(f"  {self.pc_note}", note))
            if self.error_note:
                add(Segment(f"  {g.error} {self.error_note}", base + st("listing--error")))
        if index in self._swap_notes:
            self._swap_note_segments(index, base, segs)
        if jumps.overflow and index in listing.jump_targets:
            targets = listing.jump_targets[index]
            drawn = {jumps.edges[i].dst for i in jumps.ends.get(index, ()) if jumps.lane_of[i] is not None}
            far = [t for t in targets if t != index + 1 and t not in drawn]
            if far:
                add(Segment("  -> " + ", ".join(str(t) for t in far), note))
        return segs, base

    def _live_cells(self, index: int) -> str:
        """One cell per register: written here, live across, last read here, or nothing."""
        listing = self.listing
        row = listing.live.marks[index]
        chars = dict(zip(("def", "live", "end", "point"), self.glyphs.live))
        return "".join(chars.get(row.get(r), " ") for r in range(listing.live_columns))

    def _swap_note_segments(self, index: int, base: Style, segs: list) -> None:
        st = self.style
        g = self.glyphs
        for note in self._swap_notes[index]:
            if note == "mark":
                segs.append(Segment(f"  {g.swap_mark} swap?", base + st("listing--swap-mark")))
            elif note == "ok":
                segs.append(Segment(f"  {g.swap_ok} " + _("may swap with pc {pc}").format(
                                        pc=self.swap_mark),
                                    base + st("listing--swap-ok")))
            elif note == "no":
                segs.append(Segment(f"  {g.swap_no} " + _("may not swap with pc {pc}").format(
                                        pc=self.swap_mark),
                                    base + st("listing--swap-no")))
            else:
                segs.append(Segment(f"  {note}", base + st("listing--swap-no")))

    # ------------------------------------------------------------ swap?

    def action_mark_swap(self) -> None:
        """`m`: mark the instruction under the cursor for swap? (again on the mark: clear)."""
        if self.listing is None or self.line_count == 0:
            return
        if self.swap_mark == self.cursor:
            self.clear_swap()
            return
        self._set_swap(self.cursor)

    def clear_swap(self) -> None:
        if self.swap_mark is not None:
            self._set_swap(None)

    def _set_swap(self, mark: int | None) -> None:
        if mark is None and self.swap_mark is None:
            return  # nothing marked, nothing to say
        self.swap_mark = mark
        self._update_swap()

    def watch_cursor(self, old: int, new: int) -> None:
        super().watch_cursor(old, new)
        if self.swap_mark is not None:
            self._update_swap()

    def _update_swap(self) -> None:
        """Recompute the verdict between the mark and the cursor, its arrows and notes."""
        old_range = self._swap_range
        mark, listing = self.swap_mark, self.listing
        self._swap_generation += 1
        self._swap_notes = {}
        self._swap_layout = None
        self._swap_range = None
        verdict = None
        if mark is not None and listing is not None:
            fn = self.exe.functions[listing.func_index]
            notes = self._swap_notes
            notes.setdefault(mark, []).append("mark")
            if self.cursor != mark:
                verdict = swap_verdict(fn, mark, self.cursor, self.exe)
                notes.setdefault(self.cursor, []).append("ok" if verdict.ok else "no")
                edges = []
                prefix = getattr(self.exe, "register_prefix", "$")
                for r in verdict.reasons:
                    short = _short_reason(r, prefix)
                    if r.first != r.second:
                        edges.append(Edge(r.first, r.second, short))
                        notes.setdefault(r.second, []).append(
                            f"{self.glyphs.read} " + _("{reason} from pc {pc}").format(
                                reason=short, pc=r.first))
                    else:
                        notes.setdefault(r.first, []).append(f"{self.glyphs.swap_no} {short}")
                if edges:
                    self._swap_layout = GutterLayout(edges, DEP_LANES, precompute=False)
            rows = list(notes) + [e for r in (verdict.reasons if verdict else ())
                                  for e in (r.first, r.second)]
            self._swap_range = (min(rows), max(rows))
        self.swap = verdict
        for rng in (old_range, self._swap_range):
            if rng is not None:
                self.refresh_content_lines(*rng)
        # the dependency gutter of the pc comes back when the mark goes
        if self._dep_range is not None:
            self.refresh_content_lines(*self._dep_range)
        self.post_message(self.SwapShown(self, verdict))

    def _instruction_segments(self, text: str, base: Style, reads, writes, segs: list) -> None:
        st = self.style
        opcode_done = False
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup
            piece = m.group()
            if kind == "word" and not opcode_done:
                style = st("listing--opcode")
                opcode_done = True
            elif kind == "reg":
                reg = piece[1:]
                n = int(reg) if reg else -1
                if n in writes:
                    style = st("listing--register", "listing--write")
                elif n in reads:
                    style = st("listing--register", "listing--read")
                else:
                    style = st("listing--register")
            elif kind == "comment":
                style = st("listing--comment")
            elif kind == "ref":
                style = st("listing--reference")
            elif kind == "num":
                style = st("listing--number")
            else:
                style = None
            segs.append(Segment(piece, base + style if style is not None else base))

    # ------------------------------------------------------------ queries

    def cursor_location(self) -> tuple[int, int] | None:
        if self.listing is None or self.line_count == 0:
            return None
        return self.listing.func_index, self.cursor

    def cursor_written_register(self) -> int | None:
        """The first register the instruction under the cursor writes (for `w`)."""
        if self.listing is None:
            return None
        writes = self.listing.instructions[self.cursor].writes()
        return writes[0] if writes else None


def _short_reason(r, prefix: str = "$") -> str:
    """A reason in a few words, for the listing's notes: `RAW $5`, `call`, `target`."""
    if r.register is not None and r.kind in ("RAW", "WAR", "WAW"):
        return f"{r.kind} {prefix}{r.register}"
    if r.kind == "alloc":
        return _("kill {r} before alloc").format(r=f"{prefix}{r.register}")
    if r.kind == "effect":
        return _("side effect ({kernel})").format(kernel=r.detail)
    words = {"target": N_("branch target"), "halt": N_("no fall-through"),
             "jump": NP_("swap reason", "jump"), "call": NP_("swap reason", "call"),
             "return": NP_("swap reason", "return")}
    return _(words[r.kind]) if r.kind in words else r.kind   # (same, outside: not drawn)


__all__ = ["BytecodeListing", "FunctionListing", "DepRead"]
