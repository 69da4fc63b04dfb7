// The generated TextMate grammar: every regular expression compiles, and the scopes a few
// Relay tokens get. (Python's `re` and JavaScript agree on every construct the lexer uses.)
"use strict";
const assert = require("assert");
const grammar = require("../syntaxes/relay.tmLanguage.json");

function rules(node, out = []) {
  if (Array.isArray(node)) node.forEach((n) => rules(n, out));
  else if (node && typeof node === "object") {
    for (const key of ["match", "begin", "end"]) if (typeof node[key] === "string") out.push(node[key]);
    for (const v of Object.values(node)) if (typeof v === "object") rules(v, out);
  }
  return out;
}

function scopeOf(text) {
  for (const rule of grammar.patterns) {
    if (!rule.match) continue;
    const m = new RegExp("^(?:" + rule.match + ")").exec(text);
    if (m && m[0] === text) return rule.name || (rule.captures && "captures");
  }
  return undefined;
}

describe("relay.tmLanguage.json", () => {
  it("has regular expressions that compile", () => {
    const all = rules(grammar);
    assert.ok(all.length > 20);
    for (const re of all) new RegExp(re, "u");
  });

  it("gives Relay tokens their scopes", () => {
    assert.strictEqual(scopeOf("@fib"), "entity.name.function.relay");
    assert.strictEqual(scopeOf("%n"), "variable.other.relay");
    assert.strictEqual(scopeOf("%0"), "variable.other.graph.relay");
    assert.strictEqual(scopeOf("2.5f"), "constant.numeric.float.relay");
    assert.strictEqual(scopeOf("Cons"), "support.class.constructor.relay");
    assert.strictEqual(scopeOf("let"), "keyword.control.relay");
    assert.strictEqual(scopeOf("float32"), "support.type.relay");
    assert.strictEqual(scopeOf("nn.dense"), "support.function.relay");
  });
});
