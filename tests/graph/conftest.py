"""Lets the graph tests import `graph_helpers` and the shared `program_cases` table."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))          # graph_helpers
sys.path.insert(0, str(HERE.parent))   # program_cases
