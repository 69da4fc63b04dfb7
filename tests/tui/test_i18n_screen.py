"""The screen in Simplified Chinese: every string it shows has a zh_CN translation (a
recording fallback in the translation layer collects the msgids that have none, while Pilot
walks the main screen, the help, the modals, the command line, the three teaching views,
swap? (`m`), the register numbering (`r`), the fetch-decode-execute strip (`p`), the quiz and
a set of console commands), and wide characters keep the layout: the status line and the
pane tabs measure in cells, and snapshots of the main screen and the views at 80x24 and
160x48 in both languages."""
from __future__ import annotations

import pytest
from rich.cells import cell_len

from conftest import make_app, press, screen_of, set_scene, settle
from views_support import demo_app
from views_support import settle as view_settle

SIZES = [(80, 24), (160, 48)]
BST = "programs/bst.relay"
COMMANDS = ["info registers", "info frame", "info breakpoints", "backtrace", "print $0",
            "deps", "list", "source", "heap", "info history", "display $0", "info display",
            "watch $1", "delete 9", "frobnicate", "step 2", "rstep", "search Invoke",
            "swap? 0 1", "swap? 1 3", "swap? 0 0", "numbering", "numbering frob"]


async def _walk(app, pilot) -> None:
    """Everything a session shows: stops, each pane, the help, the modals, the command line
    with commands, search, the teaching views."""
    await set_scene(app, pilot, ["@insert:18"], ["c", "s", "S", "n"])
    screen = screen_of(app)
    for _ in range(6):
        await press(app, pilot, "tab")
    await press(app, pilot, "question_mark")
    await press(app, pilot, "escape")
    await press(app, pilot, "g")
    await press(app, pilot, *"x", "enter")        # not a step number: the modal says so
    await press(app, pilot, "escape")
    for line in COMMANDS:
        screen.run_command(line)
        await settle(app, pilot)
    await press(app, pilot, "colon", "ctrl+r", "escape")
    await press(app, pilot, "slash", *"Invoke", "enter", "escape")
    await press(app, pilot, "o", "u", "u", "d", "w", "Y", "t")
    for key in ("1", "right", "s", "2", "3", "down", "S", "0"):
        await press(app, pilot, key)
    screen.run_command("delete")
    await settle(app, pilot)
    await press(app, pilot, "c", "C", "c")      # to the end of the program, back, again
    await press(app, pilot, "ctrl+r")
    await _walk_ideas(app, pilot)


async def _walk_ideas(app, pilot) -> None:
    """swap? with the mark and the cursor, both numberings, the strip one phase at a time."""
    screen = screen_of(app)
    await press(app, pilot, "s", "s")
    screen.listing.focus()
    await settle(app, pilot)
    screen.listing.set_cursor(0)
    await press(app, pilot, "m")
    for _ in range(6):                       # through reads, writes and a call
        await press(app, pilot, "down")
        for row in range(screen.listing.line_count):
            screen.listing.render_full_line(row, "")     # the notes beside the instructions
    await press(app, pilot, "m", "m", "escape")
    await press(app, pilot, "r")
    assert "复用编号" in screen.status.message
    await press(app, pilot, "r")
    await press(app, pilot, "p")
    for _ in range(7):                       # fetch, decode, execute: a call among them
        await press(app, pilot, "s")
        screen.query_one("#cycle").render()
    await press(app, pilot, "p")
    await press(app, pilot, "c", "p", "s", "s", "s", "p")   # at the end: nothing left to run


async def test_every_shown_string_has_a_translation(chinese, tmp_path):
    app = make_app(BST, config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(80, 24)) as pilot:   # the narrow layout: tabs too
        await _walk(app, pilot)
        screen = screen_of(app)
        assert screen.listing.border_title.startswith("字节码")
        assert "第" in screen.status.plain and "步" in screen.status.plain
    assert chinese == set(), sorted(chinese)


async def test_swap_numbering_and_the_strip_in_chinese(chinese, tmp_path):
    app = make_app("programs/sum_up.relay", ["3"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "s")
        screen = screen_of(app)
        listing = screen.listing
        listing.focus()
        await settle(app, pilot)
        await press(app, pilot, "down", "down", "m")          # mark pc 2
        assert "已标记 pc 2" in screen.status.message
        await press(app, pilot, "down")                       # pc 3 reads $3 which pc 2 writes
        assert "不能交换：$3 的写后读：pc 2 写 $3，pc 3 读它" in screen.status.message
        row = "".join(seg.text for seg in listing.render_full_line(3, "")[0])
        assert "RAW $3，来自 pc 2" in row and "不能与 pc 2 交换" in row
        await press(app, pilot, "escape", "r")
        assert screen.status.message.startswith("第 1 步，寄存器为复用编号")
        await press(app, pilot, "r", "p")
        strip = app.screen.query_one("#cycle")
        assert strip.rows[0][1] == "@sum_up pc=0：按 s 取指"
        await press(app, pilot, "s", "s", "s")
        assert "存储形式：操作码 11，字段 [0 0 1]" in strip.rows[0][1]
        assert "-> 处理函数 load_const；读取：无" in strip.rows[1][1]
        assert "第 2 步完成：写入 $1 = 1i64；下一个 pc 为 1" in strip.rows[2][1]
        text = strip.render().plain
        assert "取指" in text and "解码" in text and "执行" in text
        # the phase names padded by cells: the texts after them start in one column
        lines = text.splitlines()
        assert len({cell_len(line[:line.index("@" if i == 0 else "HANDLERS" if i == 1 else "第")])
                    for i, line in enumerate(lines)}) == 1
    assert chinese == set(), sorted(chinese)


async def test_the_quiz_says_next_question_not_step_over(chinese, tmp_path):
    """"Next" is three words in Chinese: the quiz's Enter (下一题), step over (步过) and the
    command line's history (下一条); the quiz's binding carries its gettext context through
    Textual's bindings to where it is shown."""
    from rvmdbg.i18n import _
    from rvmdbg.tui.quiz_screen import QuizScreen
    app = make_app("programs/sum_up.relay", ["3"], config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        words = {b.action: b.description for _k, b, _e, _t in app.screen.active_bindings.values()}
        assert _(words["next"]) == "步过"
        await press(app, pilot, "Q")
        assert isinstance(app.screen, QuizScreen)
        words = {b.action: b.description for _k, b, _e, _t in app.screen.active_bindings.values()}
        assert _(words["go_on"]) == "下一题"
        await press(app, pilot, "1")
        assert "Enter：下一题" in str(app.screen.query_one("#quiz-keys").render())
    from rvmdbg.tui.command_line import CommandLine
    history = {b.action: b.description for b in CommandLine.BINDINGS}
    assert _(history["history(1)"]) == "下一条"
    assert chinese == set(), sorted(chinese)


async def test_the_walk_is_in_english_by_default(tmp_path):
    app = make_app(BST, config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(160, 48)) as pilot:
        await set_scene(app, pilot, ["@insert:18"], ["c"])
        screen = screen_of(app)
        assert screen.listing.border_title.startswith("Bytecode")
        assert screen.status.plain.startswith("[step ")


async def test_the_stop_line_is_cut_by_cells_keeping_its_reason(chinese, tmp_path):
    app = make_app(BST, config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(80, 24)) as pilot:
        await set_scene(app, pilot, ["@insert:18"], ["c"])
        status = screen_of(app).status
        status.set_stop("[第 9 步] @insert pc=18: " + "中文字符" * 30 + "    (断点 1)")
        width = status.content_region.width
        fitted = status._fit(status.stop_text)
        assert cell_len(fitted) <= width
        assert fitted.endswith("(断点 1)")


async def test_pane_tabs_are_clicked_by_cells(chinese, tmp_path):
    app = make_app(BST, config_dir=str(tmp_path / "config"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        tabs = screen_of(app).query_one("#state-tabs")
        assert "寄存器" in tabs.render().plain
        # the third tab (堆) starts after two wide labels: its cells, not its characters
        plain = tabs.render().plain
        start, end, pane = tabs._spans[2]
        assert pane == "heap" and start == cell_len(plain[:plain.index("堆") - 1])
        await pilot.click("#state-tabs", offset=(start + 1, 0))
        await settle(app, pilot)
        assert tabs.active == "heap"


# ------------------------------------------------------------------ snapshots, both languages

def _main_scene():
    async def run_before(pilot):
        await set_scene(pilot.app, pilot, ["@insert:18"], ["c", "c", "c"])
    return run_before


async def _view_settled(pilot):
    await view_settle(pilot)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_main_screen_in_chinese(snap_compare, chinese, tmp_path, size):
    app = make_app(BST, config_dir=str(tmp_path / "config"))
    assert snap_compare(app, terminal_size=size, run_before=_main_scene())
    assert chinese == set(), sorted(chinese)


def test_main_screen_in_english_160x48(snap_compare, tmp_path):
    app = make_app(BST, config_dir=str(tmp_path / "config"))
    assert snap_compare(app, terminal_size=(160, 48), run_before=_main_scene())


VIEWS = [("flow", "tests/examples/list_length.relay", 0),
         ("executors", "programs/mlp.relay", 4),
         ("control", BST, 40)]


@pytest.mark.parametrize("view, path, steps", VIEWS, ids=[v[0] for v in VIEWS])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_views_in_chinese(snap_compare, chinese, size, view, path, steps):
    app = demo_app(path, view, steps=steps, measured=True)
    assert snap_compare(app, terminal_size=size, run_before=_view_settled)
    assert chinese == set(), sorted(chinese)


@pytest.mark.parametrize("view, path, steps", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_in_english_160x48(snap_compare, view, path, steps):
    app = demo_app(path, view, steps=steps, measured=True)
    assert snap_compare(app, terminal_size=(160, 48), run_before=_view_settled)
