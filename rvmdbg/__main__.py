"""`python -m rvmdbg` is the `rvmdbg` command."""
from rvmdbg.cli import main

raise SystemExit(main())
