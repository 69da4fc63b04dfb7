"""A classic toy stack VM, as a yardstick for dispatch cost: if/elif chain versus a table.

The toy machine has a value stack, a few variable slots and nine instructions
(PUSH k, LOAD v, STORE v, ADD, SUB, JMP t, JZ t, PRINT, HALT), the instruction set of the
well-known mini-VM demos. Its program is a list of (opcode, operand) pairs.

Three interpreters run the same program and must agree:
- `run_if_chain_names`: the "seed" style of those demos: one loop, one if/elif chain
  comparing the opcode name string, in the order the demos list them;
- `run_if_chain_numbers`: the same chain over small-integer opcodes;
- `run_table`: table dispatch: the program is predecoded once into one handler closure per
  instruction (operands bound at decode time), and the loop is `pc = code[pc]()`, the same
  scheme as rvmdbg's `VirtualMachine`.

`counting_loop(n)` is the benchmark program: acc = n + (n-1) + ... + 1, the same sum as
`programs/loop.relay` computes with tail recursion (so the results can be compared, after
wrapping to int32).
"""
from __future__ import annotations

# Opcode names in the order the classic demos list them; numbers are the list positions.
OPNAMES = ("PUSH", "LOAD", "STORE", "ADD", "SUB", "JMP", "JZ", "PRINT", "HALT")
OPCODES = {name: number for number, name in enumerate(OPNAMES)}
PUSH, LOAD, STORE, ADD, SUB, JMP, JZ, PRINT, HALT = range(len(OPNAMES))

# Variable slots of the counting loop.
K, ACC = 0, 1


def counting_loop(n: int) -> tuple[list, list]:
    """(program, initial variables): sum k for k = n down to 1, then HALT with acc on top.

    Each iteration runs 11 instructions: test, accumulate, decrement, jump back."""
    program = [
        ("PUSH", 0), ("STORE", ACC),              # 0-1   acc = 0
        ("LOAD", K), ("JZ", 13),                  # 2-3   while k != 0:
        ("LOAD", ACC), ("LOAD", K), ("ADD", None), ("STORE", ACC),   # 4-7   acc += k
        ("LOAD", K), ("PUSH", 1), ("SUB", None), ("STORE", K),       # 8-11  k -= 1
        ("JMP", 2),                               # 12
        ("LOAD", ACC), ("HALT", None),            # 13-14 result on the stack
    ]
    return program, [n, 0]


def instructions_executed(n: int) -> int:
    """How many instructions `counting_loop(n)` executes: 2 before the loop, 11 per iteration,
    and the final test, jump and result load plus HALT."""
    return 2 + 11 * n + 4


def numbered(program: list) -> list:
    """The program with integer opcodes instead of names."""
    return [(OPCODES[op], arg) for op, arg in program]


def run_if_chain_names(program: list, variables: list):
    """The seed: decode and dispatch each instruction with an if/elif chain over names."""
    stack = []
    variables = list(variables)
    pc = 0
    while True:
        op, arg = program[pc]
        if op == "PUSH":
            stack.append(arg)
            pc += 1
        elif op == "LOAD":
            stack.append(variables[arg])
            pc += 1
        elif op == "STORE":
            variables[arg] = stack.pop()
            pc += 1
        elif op == "ADD":
            b = stack.pop()
            stack.append(stack.pop() + b)
            pc += 1
        elif op == "SUB":
            b = stack.pop()
            stack.append(stack.pop() - b)
            pc += 1
        elif op == "JMP":
            pc = arg
        elif op == "JZ":
            pc = arg if stack.pop() == 0 else pc + 1
        elif op == "PRINT":
            print(stack[-1])
            pc += 1
        elif op == "HALT":
            return stack.pop()
        else:
            raise ValueError(f"unknown opcode {op!r} at pc {pc}")


def run_if_chain_numbers(program: list, variables: list):
    """The same chain over integer opcodes (`numbered(program)`)."""
    stack = []
    variables = list(variables)
    pc = 0
    while True:
        op, arg = program[pc]
        if op == PUSH:
            stack.append(arg)
            pc += 1
        elif op == LOAD:
            stack.append(variables[arg])
            pc += 1
        elif op == STORE:
            variables[arg] = stack.pop()
            pc += 1
        elif op == ADD:
            b = stack.pop()
            stack.append(stack.pop() + b)
            pc += 1
        elif op == SUB:
            b = stack.pop()
            stack.append(stack.pop() - b)
            pc += 1
        elif op == JMP:
            pc = arg
        elif op == JZ:
            pc = arg if stack.pop() == 0 else pc + 1
        elif op == PRINT:
            print(stack[-1])
            pc += 1
        elif op == HALT:
            return stack.pop()
        else:
            raise ValueError(f"unknown opcode {op!r} at pc {pc}")


class _Halt(Exception):
    """Raised by HALT's handler to leave the dispatch loop with the result."""

    def __init__(self, value):
        self.value = value


def decode(program: list, stack: list, variables: list) -> list:
    """One closure per instruction, returning the next pc; operands and the next pc are bound
    here, once, so each handler does only its instruction's work."""
    push, pop = stack.append, stack.pop

    def make(pc: int, op: str, arg):
        nxt = pc + 1
        if op == "PUSH":
            def h():
                push(arg)
                return nxt
        elif op == "LOAD":
            def h():
                push(variables[arg])
                return nxt
        elif op == "STORE":
            def h():
                variables[arg] = pop()
                return nxt
        elif op == "ADD":
            def h():
                b = pop()
                push(pop() + b)
                return nxt
        elif op == "SUB":
            def h():
                b = pop()
                push(pop() - b)
                return nxt
        elif op == "JMP":
            def h():
                return arg
        elif op == "JZ":
            def h():
                return arg if pop() == 0 else nxt
        elif op == "PRINT":
            def h():
                print(stack[-1])
                return nxt
        elif op == "HALT":
            def h():
                raise _Halt(pop())
        else:
            raise ValueError(f"unknown opcode {op!r} at pc {pc}")
        return h

    return [make(pc, op, arg) for pc, (op, arg) in enumerate(program)]


def run_table(program: list, variables: list):
    """Table dispatch: predecode into handler closures, then `pc = code[pc]()`."""
    stack: list = []
    variables = list(variables)
    code = decode(program, stack, variables)
    pc = 0
    try:
        while True:
            pc = code[pc]()
    except _Halt as done:
        return done.value


def wrap_int32(v: int) -> int:
    """`v` as a two's-complement int32, the way Relay's int32 arithmetic wraps."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


if __name__ == "__main__":
    prog, init = counting_loop(10)
    print(run_if_chain_names(prog, init), run_if_chain_numbers(numbered(prog), init),
          run_table(prog, init))
