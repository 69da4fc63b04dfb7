"""The Relay VM: bytecode, executable, compiler and dispatch loop."""
