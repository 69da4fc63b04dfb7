"""The VM compiler's passes: each a named function from module to module."""
