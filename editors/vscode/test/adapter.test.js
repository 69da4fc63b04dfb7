// rvmdbg dap through Microsoft's own DAP test client (DebugClient from
// @vscode/debugadapter-testsupport): the scenario an editor user goes through on fib.relay.
"use strict";
const assert = require("assert");
const path = require("path");
const { DebugClient } = require("@vscode/debugadapter-testsupport");

const ROOT = path.resolve(__dirname, "..", "..", "..");
const FIB = path.join(ROOT, "programs", "fib.relay");
const PYTHON = process.env.RVMDBG_PYTHON || "python3";
const BODY_LINE = 6;   // fib.relay: `if (%n < 2) {`, the first line of @fib's body
const TIMEOUT = 30000; // the adapter is a Python process on a shared machine

describe("rvmdbg dap through DebugClient", function () {
  this.timeout(4 * TIMEOUT);
  let dc;

  beforeEach(async () => {
    const env = { ...process.env, PYTHONPATH: ROOT + path.delimiter + (process.env.PYTHONPATH || "") };
    dc = new DebugClient(PYTHON, path.join(__dirname, "start-adapter.py"), "rvmdbg",
                         { env, cwd: ROOT }, true);
    dc.defaultTimeout = TIMEOUT;
    await dc.start();
  });

  afterEach(() => dc.stop());

  async function registers(frameId) {
    const scopes = (await dc.scopesRequest({ frameId })).body.scopes;
    const regs = scopes.find((s) => s.name === "Registers");
    const vars = (await dc.variablesRequest({ variablesReference: regs.variablesReference })).body.variables;
    return Object.fromEntries(vars.map((v) => [v.name, v.value]));
  }

  async function top() {
    return (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
  }

  async function motion(request, args) {
    const stopped = dc.waitForEvent("stopped");
    await request({ threadId: 1, ...args });
    return stopped;
  }

  it("answers initialize with step back, disassembly and the other capabilities", async () => {
    const caps = (await dc.initializeRequest()).body;
    for (const name of ["supportsConfigurationDoneRequest", "supportsStepBack",
                        "supportsDisassembleRequest", "supportsSteppingGranularity",
                        "supportsInstructionBreakpoints", "supportsDataBreakpoints",
                        "supportsGotoTargetsRequest", "supportsLogPoints"]) {
      assert.strictEqual(caps[name], true, name);
    }
  });

  it("debugs fib: breakpoint, step in, step back, reverse continue, disassemble, registers, print, end", async () => {
    // launch and hit the source breakpoint (fib(10))
    await dc.hitBreakpoint({ program: FIB, stopOnEntry: false },
                           { path: FIB, line: BODY_LINE });
    let frame = await top();
    assert.strictEqual(frame.name, "@fib pc=0");
    assert.strictEqual((await registers(frame.id))["$0"], "10");

    // the second hit: fib(9), one frame deeper
    let ev = await motion((a) => dc.continueRequest(a));
    assert.strictEqual(ev.body.reason, "breakpoint");
    frame = await top();
    assert.strictEqual((await registers(frame.id))["$0"], "9");
    const hitFrame = frame;

    // step in by one instruction, then step back to the hit
    ev = await motion((a) => dc.stepInRequest(a), { granularity: "instruction" });
    assert.strictEqual(ev.body.reason, "step");
    assert.strictEqual((await top()).name, "@fib pc=1");
    ev = await motion((a) => dc.stepBackRequest(a), { granularity: "instruction" });
    assert.strictEqual(ev.body.reason, "step");
    assert.strictEqual((await top()).instructionPointerReference,
                       hitFrame.instructionPointerReference);

    // reverse continue to the previous hit: fib(10) again
    ev = await motion((a) => dc.reverseContinueRequest(a));
    assert.strictEqual(ev.body.reason, "breakpoint");
    frame = await top();
    assert.strictEqual(frame.line, BODY_LINE);
    assert.strictEqual((await registers(frame.id))["$0"], "10");

    // disassemble around the pc: three instructions before it (invalid: @fib starts here)
    const dis = (await dc.disassembleRequest({
      memoryReference: frame.instructionPointerReference, instructionOffset: -3,
      instructionCount: 8 })).body.instructions;
    assert.strictEqual(dis.length, 8);
    assert.deepStrictEqual(dis.slice(0, 3).map((i) => i.presentationHint),
                           ["invalid", "invalid", "invalid"]);
    assert.strictEqual(dis[3].address, frame.instructionPointerReference);
    assert.match(dis[3].instruction, /^load_const \$1/);
    assert.strictEqual(dis[3].location.path, FIB);
    assert.strictEqual(dis[3].line, BODY_LINE);

    // evaluate `print $0` in the debug console
    const printed = (await dc.evaluateRequest({ expression: "print $0", context: "repl",
                                                frameId: frame.id })).body.result;
    assert.match(printed, /^\$0 = 10 /);

    // run to the end: no more breakpoints; the result, exited 0, terminated
    await dc.setBreakpointsRequest({ source: { path: FIB }, breakpoints: [] });
    const output = dc.assertOutput("stdout", "55\n");
    const exited = dc.waitForEvent("exited");
    const terminated = dc.waitForEvent("terminated");
    await dc.continueRequest({ threadId: 1 });
    await output;
    assert.strictEqual((await exited).body.exitCode, 0);
    await terminated;
  });

  it("stops with reason exception at a VM error and steps back from it", async () => {
    const program = path.join(ROOT, "programs", "option.relay");
    const stopped = dc.waitForEvent("stopped");
    await Promise.all([dc.configurationSequence(),
                       dc.launch({ program, args: ["17", "0"] })]);
    assert.strictEqual((await stopped).body.reason, "exception");
    const info = (await dc.exceptionInfoRequest({ threadId: 1 })).body;
    assert.strictEqual(info.breakMode, "always");
    const ev = await motion((a) => dc.stepBackRequest(a), { granularity: "instruction" });
    assert.strictEqual(ev.body.reason, "step");
  });

  it("answers an unknown request with success false, and keeps serving", async () => {
    await assert.rejects(dc.customRequest("frobnicate", {}), /does not support/);
    const threads = (await dc.threadsRequest()).body.threads;
    assert.strictEqual(threads.length, 1);
  });
});
