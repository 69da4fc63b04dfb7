// Opens a page of `rvmdbg serve` in Debian's chromium, headless (playwright-core drives it;
// no browser is downloaded), and reads the debugger's terminal from the page itself.
//
//   node drive_page.js URL [--keys s,s] [--expect TEXT]... [--screenshot FILE]
//     [--chromium PATH] [--size 1280x800] [--timeout MS]
//
// It waits for the first frame (a stop line `[step N]` on screen), then for each key in
// --keys presses it in the page and waits until the screen changes, and finally until each
// --expect text is on screen. It prints one JSON object: {"first": [lines], "last": [lines]}
// and exits 0, or prints what it waited for and the screen it saw, and exits 1.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

// The flags of a browser that talks to nothing but the page it is given.
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

function parse(argv) {
  const opts = { url: null, keys: [], expect: [], screenshot: null,
    chromium: process.env.RVMDBG_CHROMIUM || "/usr/bin/chromium", size: "1280x800",
    timeout: 30000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--keys") opts.keys = argv[++i].split(",").filter(Boolean);
    else if (a === "--expect") opts.expect.push(argv[++i]);
    else if (a === "--screenshot") opts.screenshot = argv[++i];
    else if (a === "--chromium") opts.chromium = argv[++i];
    else if (a === "--size") opts.size = argv[++i];
    else if (a === "--timeout") opts.timeout = Number(argv[++i]);
    else opts.url = a;
  }
  if (!opts.url) throw new Error("usage: node drive_page.js URL [options]");
  return opts;
}

// textual-serve's page keeps its xterm.js Terminal inside a closure. Its client object
// assigns `this.webglAddon = ...` in its constructor: a setter of that name on
// Object.prototype sees the object (and its `terminal`) and then steps out of the way.
function hookTerminal() {
  Object.defineProperty(Object.prototype, "webglAddon", {
    configurable: true,
    set(value) {
      window.__rvmdbgClient = this;
      Object.defineProperty(this, "webglAddon",
        { value, writable: true, configurable: true, enumerable: true });
    },
  });
}

// The terminal's rows as text, read from xterm.js's buffer: what the page shows.
function screenLines() {
  const client = window.__rvmdbgClient;
  if (!client || !client.terminal) return null;
  const buffer = client.terminal.buffer.active;
  const lines = [];
  for (let y = 0; y < client.terminal.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines;
}

async function main() {
  const opts = parse(process.argv.slice(2));
  const [width, height] = opts.size.split("x").map(Number);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "rvmdbg-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: opts.chromium, headless: true, args: FLAGS,
    viewport: { width, height }, timeout: opts.timeout,
  });
  let lines = null;
  let waitingFor = "the page";
  try {
    const page = context.pages()[0] || await context.newPage();
    await page.addInitScript(hookTerminal);
    await page.goto(opts.url, { timeout: opts.timeout });
    const read = async () => (lines = await page.evaluate(screenLines));
    const until = async (what, test) => {
      waitingFor = what;
      const end = Date.now() + opts.timeout;
      while (Date.now() < end) {
        const seen = await read();
        if (seen && test(seen.join("\n"))) return seen;
        await page.waitForTimeout(50);  // a poll interval: the condition decides
      }
      throw new Error(`timed out after ${opts.timeout} ms waiting for ${what}`);
    };
    const first = await until("the first frame (a `[step N]` stop line)",
      (text) => /\[step \d+\]/.test(text));
    await page.focus(".xterm-helper-textarea");
    for (const key of opts.keys) {
      const before = (await read()).join("\n");
      await page.keyboard.press(key);
      await until(`the screen to change after the key ${key}`, (text) => text !== before);
    }
    for (const text of opts.expect) {
      await until(JSON.stringify(text), (screen) => screen.includes(text));
    }
    if (opts.screenshot) {
      // the page fades the terminal in: wait until it is fully there
      await page.waitForFunction(() => getComputedStyle(
        document.querySelector(".textual-terminal")).opacity === "1", null,
      { timeout: opts.timeout });
      await page.screenshot({ path: opts.screenshot });
    }
    process.stdout.write(JSON.stringify({ first, last: lines }) + "\n");
  } catch (err) {
    process.stderr.write(`${err.message}\nwaiting for ${waitingFor}; the screen was:\n` +
      (lines ? lines.join("\n") : "(no terminal on the page)") + "\n");
    process.exitCode = 1;
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((err) => { process.stderr.write(`${err.stack || err}\n`); process.exitCode = 1; });
