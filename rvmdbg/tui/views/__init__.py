"""The three teaching views as screens over the debugger (Textual side).

`flow` (1, compile and execute flow), `executors` (2, VM versus graph executor),
`control_flow` (3, control flow and ADTs), each a widget on its own screen; `base` opens them
(`show_view`) and moves the session from them; `rows_pane` is the pane they all draw into;
`demo` hosts them without the debugger (tests, screenshots). Their data comes from
`rvmdbg.views`, which never imports Textual.
"""
