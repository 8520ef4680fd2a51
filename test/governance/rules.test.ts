import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RouterChain, type RouteTarget } from "../../src/governance/router-chain.js";
import { RULE_LIMITS } from "../../src/governance/rule-yaml.js";
import { parseUrl } from "../../src/registry/url.js";

/**
 * The routing engine on its own: rule bounds (YAML bombs, huge rules, thousands of conditions,
 * invalid grammar, a rule flapping), the previous rule kept with one log line, script rules
 * refused, the keys a consumer reads, the affinity router, explain, and the per-list cache.
 * Time and memory bounds are generous (the machine is shared); they catch a runaway, not a
 * slow run.
 */

const SERVICE = "org.demo.Greeter::.condition-router";
const consumerUrl = parseUrl("consumer://10.0.0.1/org.demo.Greeter?application=web&region=hz&interface=org.demo.Greeter");

function providers(): RouteTarget[] {
  return [
    "tri://10.0.0.2:20880/org.demo.Greeter?application=prov&region=hz",
    "tri://10.0.0.3:20880/org.demo.Greeter?application=prov&region=sh",
    "tri://10.0.0.4:20881/org.demo.Greeter?application=prov&region=bj&dubbo.tag=gray",
  ].map((u) => ({ url: parseUrl(u) }));
}

function chainWithLog(): { chain: RouterChain; lines: string[] } {
  const lines: string[] = [];
  const chain = new RouterChain({ consumer: consumerUrl, log: (level, msg) => lines.push(`${level} ${msg}`) });
  return { chain, lines };
}

const call = { method: "sayHello", args: ["alice"], attachments: {} };
const hosts = (list: readonly RouteTarget[]) => list.map((p) => p.url.host);
const SH_ONLY = "configVersion: v3.0\nconditions:\n  - => region=sh\n";

/** CPU time (not wall time: the machine is shared) and heap growth of `fn`. */
function measure(fn: () => void): { ms: number; heapMb: number } {
  global.gc?.();
  const heap = process.memoryUsage().heapUsed;
  const cpu = process.cpuUsage();
  fn();
  const used = process.cpuUsage(cpu);
  return { ms: (used.user + used.system) / 1000, heapMb: (process.memoryUsage().heapUsed - heap) / 1e6 };
}

describe("governance rules: bounds, and the previous rule kept", () => {
  it("a YAML bomb (aliases of aliases) is refused fast, the previous rule stays, one log line names the key", () => {
    const { chain, lines } = chainWithLog();
    const ps = providers();
    chain.setRule(SERVICE, SH_ONLY);
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 12; i++)
      levels.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(", ")}]`,
      );
    const bomb = `${levels.join("\n")}\nconfigVersion: v3.0\nconditions:\n  - => region=hz\n`;
    const m = measure(() => chain.setRule(SERVICE, bomb));
    assert.ok(m.ms < 2000, `refused in ${m.ms} ms`);
    assert.ok(m.heapMb < 100, `heap grew ${m.heapMb} MB`);
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.3"]);
    const refusals = lines.filter((l) => l.includes("refused"));
    assert.equal(refusals.length, 1, lines.join("\n"));
    assert.match(refusals[0], /org\.demo\.Greeter::\.condition-router refused, the previous rule stays: the YAML is refused: .*alias/i);
  });

  it(`a rule over ${RULE_LIMITS.maxTextLength} characters is refused before parsing`, () => {
    const { chain, lines } = chainWithLog();
    chain.setRule(SERVICE, SH_ONLY);
    const huge = `configVersion: v3.0\nconditions:\n  - => region=hz\n#${"x".repeat(RULE_LIMITS.maxTextLength)}\n`;
    const m = measure(() => chain.setRule(SERVICE, huge));
    assert.ok(m.ms < 200, `refused in ${m.ms} ms`);
    assert.deepEqual(hosts(chain.route(providers(), call)), ["10.0.0.3"]);
    assert.match(lines.at(-1) ?? "", /over the limit of 65536/);
  });

  it("10,000 conditions are refused (over 1,000), bounded time; 1,000 are accepted and route in bounded time", () => {
    const { chain, lines } = chainWithLog();
    const ps = providers();
    chain.setRule(SERVICE, SH_ONLY);
    const rule = (n: number) => `configVersion: v3.0\nconditions:\n${Array.from({ length: n }, (_, i) => `  - method=m${i} => region=hz\n`).join("")}`;
    const compact = `configVersion: v3.0\nconditions: [${Array.from({ length: 10_000 }, () => "'=>r'").join(",")}]\n`; // 60 KB: under the size bound
    const refused = measure(() => chain.setRule(SERVICE, compact));
    assert.ok(refused.ms < 3000, `10,000 conditions refused in ${refused.ms} ms`);
    assert.match(lines.at(-1) ?? "", /10000 conditions, over the limit of 1000/);
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.3"]);
    const accepted = measure(() => chain.setRule(SERVICE, rule(1000)));
    assert.ok(accepted.ms < 3000, `1,000 conditions parsed in ${accepted.ms} ms`);
    const routed = measure(() => {
      for (let i = 0; i < 100; i++) chain.route(ps, call);
    });
    assert.ok(routed.ms < 2000, `100 routes through 1,000 conditions in ${routed.ms} ms`);
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2", "10.0.0.3"]); // no line matches: the static tag filter only
  });

  it("invalid grammar, a list, a version above v3.1: the previous rule stays, one line each naming the key and the problem", () => {
    const { chain, lines } = chainWithLog();
    const ps = providers();
    chain.setRule(SERVICE, SH_ONLY);
    chain.setRule(SERVICE, "configVersion: v3.0\nconditions:\n  - method==sayHello => region=hz\n");
    assert.match(lines.at(-1) ?? "", /refused, the previous rule stays: Illegal route rule "method==sayHello", The error char '==' at index 6/);
    chain.setRule(SERVICE, "- a\n- b\n");
    assert.match(lines.at(-1) ?? "", /not a YAML map \(got a list\)/);
    chain.setRule(SERVICE, "conditions: [\n");
    assert.match(lines.at(-1) ?? "", /the YAML does not parse/);
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.3"]);
    chain.setRule(SERVICE, "configVersion: v3.2\nconditions:\n  - => region=bj\n");
    assert.match(lines.at(-1) ?? "", /configVersion v3.2 is above v3.1: ignored/);
    chain.setRule(SERVICE, null);
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2", "10.0.0.3"]);
  });

  it("a rule flapping 100 times a second (good, bad, good…) for a second: bounded CPU, calls routed by the last good rule, the log not flooded", async () => {
    const { chain, lines } = chainWithLog();
    const ps = providers();
    const good = [SH_ONLY, "configVersion: v3.0\nconditions:\n  - => region=hz\n"];
    const bad = "configVersion: v3.0\nconditions:\n  - =region => x\n";
    const cpu = process.cpuUsage();
    let routed = 0;
    for (let i = 0; i < 100; i++) {
      chain.setRule(SERVICE, i % 2 === 0 ? good[(i / 2) % 2] : bad);
      const expected = i % 2 === 0 ? good[(i / 2) % 2] : good[((i - 1) / 2) % 2];
      const kept = hosts(chain.route(ps, call));
      assert.deepEqual(kept, expected === SH_ONLY ? ["10.0.0.3"] : ["10.0.0.2"]);
      routed++;
      await new Promise((r) => setTimeout(r, 10));
    }
    const used = process.cpuUsage(cpu);
    assert.equal(routed, 100);
    assert.ok((used.user + used.system) / 1000 < 1500, `CPU ${(used.user + used.system) / 1000} ms for 100 updates`);
    assert.ok(lines.length <= 100, `${lines.length} log lines`);
  });

  it("a tag rule's regex that can backtrack for ever is refused; a plain one works", () => {
    const { chain, lines } = chainWithLog();
    const ps = providers();
    const cpu = process.cpuUsage();
    chain.setRule("prov.tag-router", 'configVersion: v3.0\ntags:\n  - name: gray\n    match:\n      - key: region\n        value: { regex: "(a+)+$" }\n');
    assert.match(lines.at(-1) ?? "", /backtrack/);
    chain.setRule("prov.tag-router", 'configVersion: v3.0\ntags:\n  - name: gray\n    match:\n      - key: region\n        value: { regex: "(a|aa)*b" }\n');
    assert.match(lines.at(-1) ?? "", /\(a\|aa\)\*b.*backtrack/);
    chain.route(ps, { ...call, attachments: { "dubbo.tag": "gray" } });
    const used = process.cpuUsage(cpu);
    assert.ok((used.user + used.system) / 1000 < 1000);
    chain.setRule("prov.tag-router", 'configVersion: v3.0\ntags:\n  - name: south\n    match:\n      - key: region\n        value: { regex: "s.|b." }\n');
    assert.deepEqual(hosts(chain.route(ps, { ...call, attachments: { "dubbo.tag": "south" } })), ["10.0.0.3", "10.0.0.4"]);
  });

  it("script rules are refused with one log line per key, however often they are written", () => {
    const { chain, lines } = chainWithLog();
    for (let i = 0; i < 5; i++)
      assert.equal(chain.setRule("prov.script-router", `type: javascript\nscript: "function route(a) { return a; } // ${i}"\n`), true);
    chain.setRule("other.script-router", "script: x\n");
    const scriptLines = lines.filter((l) => l.includes("script"));
    assert.equal(scriptLines.length, 2, scriptLines.join("\n"));
    assert.match(scriptLines[0], /prov\.script-router refused: script rules run code fetched from the config center \(remote code execution\)/);
    assert.ok(chain.idle);
  });

  it("keys(): the keys a Java consumer subscribes to; unknown keys are refused by setRule", () => {
    const chain = new RouterChain({ consumer: parseUrl("consumer://10.0.0.1/org.demo.Greeter?application=web&version=1.0.0&group=g") });
    assert.deepEqual(chain.keys(["prov", "other"]).sort(), [
      "org.demo.Greeter:1.0.0:g.affinity-router",
      "org.demo.Greeter:1.0.0:g.condition-router",
      "other.condition-router",
      "other.script-router",
      "other.tag-router",
      "prov.condition-router",
      "prov.script-router",
      "prov.tag-router",
      "web.condition-router",
    ]);
    assert.equal(chain.setRule("web.configurators", "x"), false);
    assert.equal(chain.setRule("prov.affinity-router", "x"), false);
    assert.equal(chain.setRule("org.demo.Greeter:1.0.0:g.affinity-router", null), true);
  });
});

describe("governance routing: affinity, explain, cache", () => {
  it("affinity (3.3.6): the providers in the consumer's region if they are at least ratio % of the list, else all", () => {
    const chain = new RouterChain({ consumer: consumerUrl });
    const ps = providers();
    const key = "org.demo.Greeter::.affinity-router";
    chain.setRule(key, "configVersion: v3.1\naffinityAware:\n  key: region\n  ratio: 30\n");
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2"]); // 1 of 2 (after the static tag filter) >= 30 %
    chain.setRule(key, "configVersion: v3.1\naffinityAware:\n  key: region\n  ratio: 60\n");
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2", "10.0.0.3"]); // 50 % < 60 %: all kept
    chain.setRule(key, "configVersion: v3.0\naffinityAware:\n  key: region\n  ratio: 10\n"); // not v3.1: ignored, previous stays
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2", "10.0.0.3"]);
    chain.setRule(key, "configVersion: v3.1\naffinityAware:\n  key: region\n  ratio: 101\n"); // out of range: ignored
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2", "10.0.0.3"]);
    chain.setRule(key, "configVersion: v3.1\nenabled: false\naffinityAware:\n  key: region\n  ratio: 0\n");
    assert.deepEqual(hosts(chain.route(ps, call)), ["10.0.0.2", "10.0.0.3"]);
  });

  it("explain names each router in Dubbo's order, the rule it applied, what it kept and why; fail-fast stops the chain", () => {
    const chain = new RouterChain({ consumer: consumerUrl });
    const ps = providers();
    chain.setRule("prov.tag-router", 'configVersion: v3.0\nforce: true\ntags:\n  - name: gray\n    addresses: ["10.0.0.4:20881"]\n');
    chain.setRule(SERVICE, "configVersion: v3.0\nforce: true\nconditions:\n  - method=sayHello => region=hz\n");
    const e = chain.explain(ps, { ...call, attachments: { "dubbo.tag": "gray" } });
    assert.deepEqual(
      e.steps.map((s) => [s.router, s.rule, s.kept]),
      [
        ["TagStateRouter", "prov.tag-router", 1],
        ["AffinityServiceStateRouter", undefined, 1],
        ["ServiceStateRouter", SERVICE, 0],
      ],
    );
    assert.match(e.steps[2].message, /"method=sayHello => region=hz": matched, no provider matches the then part and force is true: none kept/);
    assert.match(e.text, /stopped after ServiceStateRouter: no provider left \(fail-fast\)/);
    assert.deepEqual(e.kept, []);
    assert.deepEqual(chain.route(ps, { ...call, attachments: { "dubbo.tag": "gray" } }), []);
  });

  it("results are cached per provider-list array: the same array routes to the same result array; a new array is routed afresh", () => {
    const chain = new RouterChain({ consumer: consumerUrl });
    const ps = providers();
    chain.setRule(SERVICE, "configVersion: v3.0\nconditions:\n  - method=sayHello => region=hz,sh\n");
    const a = chain.route(ps, call);
    assert.equal(chain.route(ps, call), a);
    const next = [...ps.slice(0, 1), { url: parseUrl("tri://10.0.0.9:20880/org.demo.Greeter?application=prov&region=sh") }];
    assert.deepEqual(hosts(chain.route(next, call)), ["10.0.0.2", "10.0.0.9"]);
    assert.equal(chain.route(ps, { ...call, method: "other" }), chain.route(ps, { ...call, method: "other2" }));
  });

  it("no rules: route() returns the very array given when no provider has a static tag", () => {
    const chain = new RouterChain({ consumer: consumerUrl });
    const ps = providers().slice(0, 2);
    assert.ok(chain.idle);
    assert.equal(chain.route(ps, call), ps);
    assert.equal(chain.route(ps, { ...call, attachments: { "dubbo.tag": "gray" } }), ps);
    assert.deepEqual(chain.route(ps, { ...call, attachments: { "dubbo.tag": "gray", "dubbo.force.tag": "true" } }), []);
  });
});
