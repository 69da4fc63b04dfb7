"""The Relay language: text format, AST, types, type checker, operators, interpreter."""
