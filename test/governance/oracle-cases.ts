/**
 * Generated cases for the router oracle: rules of every kind and grammar feature, providers and
 * calls drawn by a seeded generator (the same corpus on every run), each case run through our
 * RouterChain and through Dubbo 3.3.1's own routers (test/java/dubbo/org/triplerpc/router).
 */

export interface OracleCase {
  name: string;
  consumer: string;
  providers: string[];
  rules: { key: string; rule: string | null }[];
  method: string;
  arguments: unknown[];
  attachments: Record<string, string>;
  repeat?: number;
}

/** mulberry32: a small seeded generator. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const IFACE = "org.demo.Greeter";
const SERVICE_KEY = `${IFACE}::.condition-router`;
const CONSUMER_APP_KEY = "web.condition-router";
const PROVIDER_APP_KEY = "prov.condition-router";
const TAG_KEY = "prov.tag-router";

const WHEN_TERMS = [
  "method=sayHello",
  "method=sayHello,sayHi",
  "method!=getUser",
  "method=say*",
  "method=*Hi",
  "method=s*o",
  "host=10.0.0.1",
  "host!=10.0.0.*",
  "host=10.0.1.1",
  "region=hz",
  "region=sh",
  "region=$region",
  "region!=bj",
  "arguments[0]=alice",
  "arguments[0]=a*",
  "arguments[0]!=bob",
  "arguments[1]=1~5",
  "arguments[1]=5~",
  "arguments[1]=~5",
  "arguments[1]=3",
  "arguments[5]=x",
  "arguments[0]=null",
  "arguments[0]=true",
  "arguments=x",
  "arguments[0].name=alice",
  "attachments[user]=vip",
  "attachments[user]!=vip",
  "attachments[dubbo.tag]=gray",
  "attachments[dubbo.tag]!=gray",
  "attachments[user]=v*",
  "application=web",
  "application!=web",
  "consumer.region=hz",
  "env=prod",
  "env=prod,gray",
  "methods=sayHello",
  "path=org.demo.*",
  "protocol=consumer",
  "port=0",
  "nothing=x",
  "nothing!=x",
  // calls that match more often, so more rules reach their then part
  "method=sayHello,sayHi,getUser",
  "method=*",
  "region=hz",
  "application=web",
  "host=10.0.0.1",
  "env=prod",
  "method!=nothing",
  "region=hz",
  "application=web",
  "method=*",
  "arguments[0]!=nobody",
  "host=10.0.0.*",
];

const THEN_TERMS = [
  "region=hz",
  "region=$region",
  "region!=sh",
  "region=h*",
  "region=hz,sh",
  "region!=hz,bj",
  "weight=100~200",
  "weight=150~",
  "weight=~120",
  "weight=abc~",
  "weight=~",
  "weight=50~abc",
  "weight=100",
  "weight!=100",
  "host=10.0.0.2,10.0.0.3",
  "host!=10.0.0.4",
  "host=10.0.0.*",
  "port=20880",
  "port=20881",
  "address=*:20881",
  "address=10.0.0.2:20880",
  "version=2.0.0",
  "version!=2.0.0",
  "dubbo.tag=gray",
  "provider.env=gray",
  "env=$env",
  "env=$nothing",
  "region=$host",
  "arguments[0]=alice",
  "arguments[0]!=x",
  "attachments[user]!=vip",
  "attachments[user]=vip",
  "protocol=tri",
  "path=org.demo.Greeter",
  "application=prov",
  "env=gray & region=hz",
  "region=hz & weight=100~150",
  "env!=gray",
  "nothing=x",
  "nothing!=x",
];

const METHODS = ["sayHello", "sayHi", "getUser"];
const ARGS: unknown[][] = [["alice", 3], ["bob", 10], [], [null], [true, "x"], ["amy", 5], ["alice", 150], [7]];
const ATTACHMENTS: Record<string, string>[] = [
  {},
  {},
  { user: "vip" },
  { user: "basic" },
  { "dubbo.tag": "gray" },
  { "dubbo.tag": "blue" },
  { "dubbo.tag": "gray|a|b" },
  { "dubbo.tag": "hz" },
];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function chance(r: () => number, p: number): boolean {
  return r() < p;
}

function provider(r: () => number, i: number, tagged: boolean, net = "10.0.0"): string {
  const host = i < 6 ? `${net}.${i + 2}` : `10.0.1.${i}`;
  const port = pick(r, [20880, 20880, 20881]);
  const params: string[] = ["application=prov", "remote.application=prov", `interface=${IFACE}`];
  const region = pick(r, ["hz", "hz", "sh", "bj", ""]);
  if (region) params.push(`region=${region}`);
  const weight = pick(r, ["50", "100", "150", "200", "abc", ""]);
  if (weight) params.push(`weight=${weight}`);
  params.push(`version=${pick(r, ["1.0.0", "2.0.0"])}`);
  const env = pick(r, ["gray", "prod", ""]);
  if (env) params.push(`env=${env}`);
  if (tagged && chance(r, 0.35)) params.push(`dubbo.tag=${pick(r, ["gray", "blue", "gray|a"])}`);
  return `tri://${host}:${port}/${IFACE}?${params.join("&")}`;
}

function consumer(r: () => number, tags: boolean): string {
  const params = ["application=web", "region=hz", "env=prod", `interface=${IFACE}`];
  if (tags && chance(r, 0.2)) params.push(`dubbo.tag=${pick(r, ["gray", "blue"])}`);
  if (tags && chance(r, 0.15)) params.push("dubbo.force.tag=true");
  return `consumer://10.0.0.1/${IFACE}?${params.join("&")}`;
}

function expr(r: () => number, terms: readonly string[]): string {
  const n = chance(r, 0.7) ? 1 : 2;
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(r, terms));
  return out.join(" & ");
}

function conditionLine(r: () => number): string {
  const x = r();
  if (x < 0.12) return `=> ${expr(r, THEN_TERMS)}`;
  if (x < 0.1) return `true => ${expr(r, THEN_TERMS)}`;
  if (x < 0.14) return expr(r, THEN_TERMS);
  if (x < 0.2) return `${expr(r, WHEN_TERMS)} => false`;
  if (x < 0.23) return `${expr(r, WHEN_TERMS)} =>`;
  if (x < 0.25)
    return pick(r, ["method==sayHello => region=hz", "=region => region=hz", ", a => b", "method=sayHello => &=x", "method=sayHello => region=hz,,sh"]);
  return `${expr(r, WHEN_TERMS)} => ${expr(r, THEN_TERMS)}`;
}

const q = (s: string): string => JSON.stringify(s);

function header(r: () => number, version: string | undefined): string[] {
  const lines: string[] = [];
  if (version !== undefined) lines.push(`configVersion: ${version}`);
  lines.push("scope: service", `key: ${IFACE}`);
  if (chance(r, 0.5)) lines.push(`force: ${chance(r, 0.5)}`);
  if (chance(r, 0.15)) lines.push("enabled: false");
  else if (chance(r, 0.2)) lines.push("enabled: true");
  if (chance(r, 0.2)) lines.push("runtime: true", "priority: 1");
  return lines;
}

function v30Rule(r: () => number): string {
  const lines = header(r, pick(r, ["v3.0", "v3.0", "v2.7", undefined]));
  lines.push("conditions:");
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) lines.push(`  - ${q(conditionLine(r))}`);
  return `${lines.join("\n")}\n`;
}

function v31Rule(r: () => number): string {
  const lines = header(r, pick(r, ["v3.1", "V3.1"]));
  lines.push("conditions:");
  const n = 1 + Math.floor(r() * 2);
  for (let i = 0; i < n; i++) {
    lines.push(chance(r, 0.85) ? `  - from: { match: ${q(expr(r, WHEN_TERMS))} }` : "  - from: {}");
    const dests = chance(r, 0.1) ? 0 : 1 + Math.floor(r() * 3);
    if (dests === 0) continue;
    lines.push("    to:");
    for (let d = 0; d < dests; d++) {
      const w = pick(r, ["", ", weight: 0", ", weight: 50", ", weight: 100", ", weight: 300", ", weight: 900"]);
      lines.push(chance(r, 0.9) ? `      - { match: ${q(expr(r, THEN_TERMS))}${w} }` : `      - { weight: 200 }`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function tagRule(r: () => number, providers: readonly string[]): string {
  const v30 = chance(r, 0.6);
  const lines = [...(v30 ? ["configVersion: v3.0"] : []), "key: prov"];
  if (chance(r, 0.4)) lines.push(`force: ${chance(r, 0.5)}`);
  if (chance(r, 0.1)) lines.push("enabled: false");
  lines.push("tags:");
  const n = 1 + Math.floor(r() * 3);
  const addrOf = (u: string) => /tri:\/\/([^/]+)\//.exec(u)?.[1] ?? "";
  for (let i = 0; i < n; i++) {
    lines.push(`  - name: ${pick(r, ["gray", "blue", "gray|a", "hz", "gray"])}`);
    if (v30 && chance(r, 0.5)) {
      const key = pick(r, ["env", "region", "weight", "nothing"]);
      const value = pick(r, [
        "{ exact: gray }",
        "{ exact: hz }",
        "{ prefix: g }",
        '{ regex: "h.*" }',
        '{ wildcard: "*" }',
        "{ wildcard: prod }",
        "{ empty: x }",
        "{ noempty: x }",
        "{ exact: nobody }",
      ]);
      lines.push("    match:", `      - key: ${key}`, `        value: ${value}`);
    } else {
      const addrs = new Set<string>();
      const k = Math.floor(r() * 3);
      for (let j = 0; j < k; j++) addrs.add(pick(r, providers.map(addrOf)));
      if (chance(r, 0.25)) addrs.add(pick(r, ["10.0.0.*:20880", "0.0.0.0:20881", "10.0.0.0/30", "10.9.9.9:1", "10.0.0.2-4:20880", "10.0.1.*"]));
      lines.push(`    addresses: [${[...addrs].map(q).join(", ")}]`);
    }
  }
  return `${lines.join("\n")}\n`;
}

const BROKEN = [
  "conditions: [\n",
  "- a\n- b\n",
  "",
  "configVersion: v3.2\nconditions:\n  - => region=hz\n",
  "configVersion: v4.0\nconditions:\n  - => region=hz\n",
  "configVersion: 3.0\nconditions:\n  - => region=hz\n",
  "configVersion: v3.0\nconditions: => region=hz\n",
  "configVersion: v3.0\nconditions: []\n",
  "configVersion: v3.0\npriority: high\nconditions:\n  - => region=hz\n",
  "configVersion: v3.0\nvalid: false\nconditions:\n  - => region=hz\n",
  "configVersion: v3.0\nenabled: yes\nforce: on\nconditions:\n  - => region=bj\n",
  "configVersion: v3.1\nconditions:\n  - from: { match: method=sayHello }\n    to:\n      - { match: region=hz, weight: abc }\n",
  "configVersion: v3.1\nconditions: []\n",
  'configVersion: v3.1\nconditions:\n  - "method=sayHello => region=hz"\n',
  "a: &x [1, 2]\nb: *x\nconfigVersion: v3.0\nconditions:\n  - => region=hz\n",
];

function call(r: () => number): Pick<OracleCase, "method" | "arguments" | "attachments"> {
  const attachments = { ...pick(r, ATTACHMENTS) };
  if (chance(r, 0.1)) attachments["dubbo.force.tag"] = pick(r, ["true", "false", "TRUE"]);
  return { method: pick(r, METHODS), arguments: pick(r, ARGS), attachments };
}

function base(r: () => number, name: string, tags: boolean): OracleCase {
  const n = 3 + Math.floor(r() * 4);
  const providers = Array.from({ length: n }, (_, i) => provider(r, i, tags));
  return { name, consumer: consumer(r, tags), providers, rules: [], ...call(r) };
}

/** The corpus: about 400 cases, the same ones on every run (a fixed seed). */
export function generateCases(seed = 35): OracleCase[] {
  const r = rng(seed);
  const cases: OracleCase[] = [];
  const add = (c: OracleCase) => cases.push(c);
  for (let i = 0; i < 130; i++) {
    const c = base(r, `v3.0 service #${i}`, chance(r, 0.2));
    c.rules.push({ key: SERVICE_KEY, rule: v30Rule(r) });
    add(c);
  }
  for (let i = 0; i < 40; i++) {
    const c = base(r, `v3.0 consumer app #${i}`, false);
    c.rules.push({ key: chance(r, 0.7) ? CONSUMER_APP_KEY : PROVIDER_APP_KEY, rule: v30Rule(r) });
    add(c);
  }
  for (let i = 0; i < 50; i++) {
    const c = base(r, `v3.1 #${i}`, false);
    c.rules.push({ key: pick(r, [SERVICE_KEY, SERVICE_KEY, CONSUMER_APP_KEY, PROVIDER_APP_KEY]), rule: v31Rule(r) });
    c.repeat = 600;
    add(c);
  }
  for (let i = 0; i < 20; i++) add(base(r, `static tags #${i}`, true));
  for (let i = 0; i < 70; i++) {
    const c = base(r, `dynamic tags #${i}`, true);
    c.rules.push({ key: TAG_KEY, rule: tagRule(r, c.providers) });
    add(c);
  }
  for (let i = 0; i < 40; i++) {
    const c = base(r, `chain #${i}`, true);
    c.rules.push({ key: TAG_KEY, rule: tagRule(r, c.providers) }, { key: SERVICE_KEY, rule: v30Rule(r) });
    if (chance(r, 0.5)) c.rules.push({ key: pick(r, [CONSUMER_APP_KEY, PROVIDER_APP_KEY]), rule: v30Rule(r) });
    if (chance(r, 0.2)) c.rules.push({ key: SERVICE_KEY, rule: null });
    add(c);
  }
  for (let i = 0; i < 40; i++) {
    const c = base(r, `update sequence #${i}`, false);
    const n = 2 + Math.floor(r() * 3);
    for (let k = 0; k < n; k++) {
      const key = pick(r, [SERVICE_KEY, CONSUMER_APP_KEY, PROVIDER_APP_KEY]);
      const x = r();
      c.rules.push({ key, rule: x < 0.35 ? v30Rule(r) : x < 0.65 ? v31Rule(r) : x < 0.85 ? pick(r, BROKEN) : null });
    }
    c.repeat = 600;
    add(c);
  }
  for (let i = 0; i < 15; i++) {
    // Loopback providers: Java's address match treats 127.* as not IPv4 (only *, a CIDR or 0.0.0.0:port match it).
    const c = base(r, `loopback tags #${i}`, true);
    c.providers = c.providers.map((_, k) => provider(r, k, true, "127.0.0"));
    const addrs = ["127.0.0.2:20880", "127.0.0.3:20881", "127.0.0.*", "0.0.0.0:20880", "127.0.0.0/8", "*", "127.0.0.2"];
    const a = [pick(r, addrs), pick(r, addrs)];
    c.rules.push({ key: TAG_KEY, rule: `tags:\n  - name: gray\n    addresses: [${a.map(q).join(", ")}]\n` });
    c.attachments = chance(r, 0.7) ? { "dubbo.tag": "gray" } : {};
    add(c);
  }
  for (let i = 0; i < 12; i++) {
    // IPv6 providers: host and address keys, tag addresses in brackets, full and compressed forms.
    const c = base(r, `ipv6 #${i}`, true);
    c.providers = c.providers.map((u, k) => u.replace(/tri:\/\/[^/]+\//, `tri://[2001:db8::${k + 2}]:${pick(r, [20880, 20881])}/`));
    const addrs = ["[2001:db8::2]:20880", "[2001:db8::3]", "2001:db8:0:0:0:0:0:*", "2001:db8::/120", "*", "0.0.0.0:20881", "2001:db8::4"];
    const x = r();
    if (x < 0.5) c.rules.push({ key: TAG_KEY, rule: `tags:\n  - name: gray\n    addresses: [${[pick(r, addrs), pick(r, addrs)].map(q).join(", ")}]\n` });
    else
      c.rules.push({
        key: SERVICE_KEY,
        rule: cond6(pick(r, ["=> host=2001:db8::2,2001:db8::3", "=> address=*:20881", "=> host!=2001:db8::4", "host=10.0.0.1 => address=2001:db8::2:20880"])),
      });
    c.attachments = chance(r, 0.6) ? { "dubbo.tag": "gray" } : {};
    add(c);
  }
  for (const c of quirks()) add(c);
  BROKEN.forEach((text, i) => {
    const c = base(r, `broken rule #${i}`, false);
    c.rules.push({ key: SERVICE_KEY, rule: "configVersion: v3.0\nconditions:\n  - => region=sh\n" }, { key: SERVICE_KEY, rule: text });
    add(c);
  });
  return cases;
}

/** The Java behaviours docs/governance.md names, each pinned by a case of its own. */
function quirks(): OracleCase[] {
  const consumer = `consumer://10.0.0.1/${IFACE}?application=web&region=hz&interface=${IFACE}`;
  const p = (host: string, params: string) => `tri://${host}:20880/${IFACE}?application=prov&remote.application=prov&${params}`;
  const providers = [
    p("10.0.0.2", "weight=100&region=hz"),
    p("10.0.0.3", "weight=200&region=sh"),
    p("10.0.0.4", "region=sh"),
    p("10.0.0.5", "weight=abc&dubbo.tag=gray"),
  ];
  const call = { method: "sayHello", arguments: ["alice"], attachments: {} };
  const cond = (line: string, force = false) => `configVersion: v3.0\nforce: ${force}\nconditions:\n  - ${JSON.stringify(line)}\n`;
  return [
    { name: "quirk weight=150~ keeps every provider with a weight", consumer, providers, rules: [{ key: SERVICE_KEY, rule: cond("=> weight=150~") }], ...call },
    { name: "quirk weight=~150 is an open start", consumer, providers, rules: [{ key: SERVICE_KEY, rule: cond("=> weight=~150") }], ...call },
    {
      name: "quirk attachments[x.y]!=v always matches",
      consumer,
      providers,
      rules: [{ key: SERVICE_KEY, rule: cond("attachments[x.y]!=gray => region=sh") }],
      ...call,
      attachments: { "x.y": "gray" },
    },
    {
      name: "quirk empty dynamic tag group, force false: failover to untagged without the static tag",
      consumer,
      providers,
      rules: [{ key: TAG_KEY, rule: 'configVersion: v3.0\nforce: false\ntags:\n  - name: gray\n    addresses: ["10.9.9.9:20880"]\n' }],
      ...call,
      attachments: { "dubbo.tag": "gray" },
    },
    {
      name: "quirk tag levels: gray|a|b falls back to gray",
      consumer,
      providers,
      rules: [{ key: TAG_KEY, rule: 'tags:\n  - name: gray\n    addresses: ["10.0.0.3:20880"]\n' }],
      ...call,
      attachments: { "dubbo.tag": "gray|a|b" },
    },
    {
      name: "quirk consumer app rule applied at 145 and 150",
      consumer,
      providers,
      rules: [
        {
          key: CONSUMER_APP_KEY,
          rule: "configVersion: v3.1\nconditions:\n  - from: { match: method=sayHello }\n    to:\n      - { match: weight=100~250, weight: 50 }\n      - { match: region=sh, weight: 50 }\n",
        },
      ],
      ...call,
      repeat: 600,
    },
  ];
}

function cond6(line: string): string {
  return `configVersion: v3.0\nconditions:\n  - ${JSON.stringify(line)}\n`;
}
