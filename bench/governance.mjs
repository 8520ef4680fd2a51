// The routing engine's cost per call (issue 35): RouterChain.route() over 10 and 100 providers with
//   - no rules (the static tag check only),
//   - one condition rule (v3.0, service scope) and one tag rule (dynamic, by addresses),
//   - the same with a v3.1 weighted rule in place of the v3.0 one,
// beside the same loop calling a no-op in place of route() (the loop's own cost), pinned to one CPU.
//
//   npm run build && node bench/governance.mjs
//   CALLS=2000000 ROUNDS=5 node bench/governance.mjs
//
// Each figure is the best of ROUNDS rounds of CALLS calls, ns of CPU per call, minus the loop's own cost.
// The provider list is the same array for every call (as a client passes it while the list is
// unchanged); the calls vary their method, arguments and tag.
import { spawnSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(HERE, "..", process.env.DIST ?? "dist");
const CALLS = Number(process.env.CALLS ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

if (!process.env.GOVERNANCE_BENCH_CHILD && spawnSync("taskset", ["-V"]).status === 0) {
  const r = spawnSync("taskset", ["-c", "0", process.execPath, fileURLToPath(import.meta.url)], {
    stdio: "inherit",
    env: { ...process.env, GOVERNANCE_BENCH_CHILD: "1" },
  });
  process.exit(r.status ?? 1);
}

const require = createRequire(import.meta.url);
const { RouterChain } = require(`${DIST}/src/governance/router-chain.js`);
const { parseUrl } = require(`${DIST}/src/registry/url.js`);

const consumer = parseUrl("consumer://10.0.0.1/org.demo.Greeter?application=web&region=hz&interface=org.demo.Greeter");
const REGIONS = ["hz", "sh", "bj"];

function providers(n) {
  return Array.from({ length: n }, (_, i) => ({
    url: parseUrl(`tri://10.0.${i >> 8}.${i & 255}:20880/org.demo.Greeter?application=prov&remote.application=prov&region=${REGIONS[i % 3]}&weight=100`),
  }));
}

const CONDITION =
  "configVersion: v3.0\nscope: service\nkey: org.demo.Greeter\nconditions:\n  - method=sayHello => region=hz\n  - arguments[0]=vip* => region=hz,sh\n";
const WEIGHTED =
  "configVersion: v3.1\nconditions:\n  - from: { match: method=sayHello }\n    to:\n      - { match: region=hz, weight: 80 }\n      - { match: region=sh, weight: 20 }\n";
function tagRule(list) {
  const gray = list.filter((_, i) => i % 5 === 0).map((p) => `"${p.url.host}:${p.url.port}"`);
  return `configVersion: v3.0\nkey: prov\ntags:\n  - name: gray\n    addresses: [${gray.join(", ")}]\n`;
}

const CALLS_MIX = [
  { method: "sayHello", args: ["alice"], attachments: {} },
  { method: "sayHi", args: ["vip-bob"], attachments: {} },
  { method: "sayHello", args: ["carol"], attachments: { "dubbo.tag": "gray" } },
  { method: "other", args: [], attachments: {} },
];

/** ns of CPU per call (process CPU time, not wall time: the machine is shared, and preemption is not the router's cost). */
function loop(route, list) {
  let kept = 0;
  const t = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) kept += route(list, CALLS_MIX[i & 3]).length;
  const used = process.cpuUsage(t);
  const ns = ((used.user + used.system) * 1000) / CALLS;
  if (kept < 0) console.log(kept);
  return ns;
}

function best(route, list) {
  let b = Number.POSITIVE_INFINITY;
  for (let r = 0; r < ROUNDS; r++) b = Math.min(b, loop(route, list));
  return b;
}

const rows = [];
for (const n of [10, 100]) {
  const list = providers(n);
  const bare = best((l) => l, list);
  const none = new RouterChain({ consumer });
  const both = new RouterChain({ consumer });
  both.setRule("org.demo.Greeter::.condition-router", CONDITION);
  both.setRule("prov.tag-router", tagRule(list));
  const weighted = new RouterChain({ consumer });
  weighted.setRule("org.demo.Greeter::.condition-router", WEIGHTED);
  weighted.setRule("prov.tag-router", tagRule(list));
  const f = (c) => best((l, call) => c.route(l, call), list) - bare;
  rows.push([n, bare, f(none), f(both), f(weighted)]);
}

console.log(`RouterChain.route(), best of ${ROUNDS} × ${CALLS} calls, ns of CPU per call above the bare loop\n`);
console.log("| providers | bare loop | no rules | condition v3.0 + tag rule | condition v3.1 (weighted) + tag rule |");
console.log("|---:|---:|---:|---:|---:|");
for (const [n, bare, none, both, w] of rows) console.log(`| ${n} | ${bare.toFixed(1)} | ${none.toFixed(1)} | ${both.toFixed(1)} | ${w.toFixed(1)} |`);
