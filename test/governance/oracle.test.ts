// tier: slow (Java (Dubbo's routers))
import * as assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { RouterChain, type RouteTarget } from "../../src/governance/router-chain.js";
import { parseUrl } from "../../src/registry/url.js";
import { classpath, dubboJavaSkip, requireDubboJava } from "../java/dubbo-peer.js";
import { generateCases, type OracleCase } from "./oracle-cases.js";

/**
 * Our router chain against Dubbo 3.3.1's own routers, case by case: about 400 generated cases
 * (condition rules v3.0 and v3.1 at service, consumer-app and provider-app scope, every grammar
 * feature, tags static and dynamic, chains of rules, rules that do not parse) go through one JVM
 * running Dubbo's routers chained as a consumer chains them (RouterOracle.java), and through
 * RouterChain. Every case must agree: the providers kept, or for v3.1 weighted destinations the
 * outcomes over 600 draws and their shares (see sameDraws). A disagreement prints the case, both results and both traces.
 * Fails, not skips, under CI when Java or the fixture is missing.
 */

interface Verdict {
  name: string;
  kept?: number[];
  outcomes?: Record<string, number>;
  trace?: string;
  error: string | null;
}

function runOracle(file: string, cp: string): Promise<Verdict[]> {
  const flags = ["-Ddubbo.application.logger=jdk", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m"];
  return new Promise((resolve, reject) =>
    execFile(
      "java",
      [...flags, "-cp", cp, "org.triplerpc.router.RouterOracle", file],
      { maxBuffer: 256 * 1024 * 1024, timeout: 120_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`the router oracle failed: ${err.message}\n${stderr.slice(-2000)}`));
        else resolve(JSON.parse(stdout) as Verdict[]);
      },
    ),
  );
}

/** Our chain on one case: the kept indexes (sorted), and the outcomes over `repeat` routes with their counts. */
function ours(c: OracleCase): { kept: number[]; outcomes: Map<string, number>; text: string } {
  const chain = new RouterChain({ consumer: parseUrl(c.consumer) });
  const providers: RouteTarget[] = c.providers.map((u) => ({ url: parseUrl(u) }));
  const call = { method: c.method, args: c.arguments, attachments: c.attachments };
  chain.route(providers, call); // the provider list arrives before the rules, as the oracle notifies first
  for (const r of c.rules) chain.setRule(r.key, r.rule);
  const keyOf = (list: readonly RouteTarget[]) =>
    list
      .map((p) => providers.indexOf(p))
      .sort((a, b) => a - b)
      .join(",");
  const outcomes = new Map<string, number>();
  for (let i = 0; i < (c.repeat ?? 1); i++) {
    const k = keyOf(chain.route(providers, call));
    outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  }
  const first = chain.explain(providers, call);
  const kept = first.kept.map((u) => c.providers.findIndex((_, i) => providers[i].url === u)).sort((a, b) => a - b);
  return { kept, outcomes, text: first.text };
}

/**
 * Weighted draws agree when every outcome's share differs by at most 0.12 between the two sides
 * (over 600 draws, 4 standard deviations of the difference at worst), and no outcome seen in 2 %
 * of one side's draws is missing from the other's (a rarer one may go unseen by chance: a second
 * draw on a first draw's subset makes outcomes of well under 1 %).
 */
function sameDraws(java: Record<string, number>, mine: ReadonlyMap<string, number>, n: number): boolean {
  for (const k of new Set([...Object.keys(java), ...mine.keys()])) {
    const a = (java[k] ?? 0) / n;
    const b = (mine.get(k) ?? 0) / n;
    if (Math.abs(a - b) > 0.12) return false;
    if ((a === 0 && b >= 0.02) || (b === 0 && a >= 0.02)) return false;
  }
  return true;
}

describe("routing rules case by case against Dubbo 3.3.1's own routers", { skip: dubboJavaSkip() }, () => {
  const cases = generateCases();
  let verdicts: Verdict[];
  let dir: string;

  before(async () => {
    requireDubboJava();
    dir = mkdtempSync(join(tmpdir(), "triple-rpc-router-oracle-"));
    const file = join(dir, "cases.json");
    writeFileSync(file, JSON.stringify(cases));
    verdicts = await runOracle(file, await classpath());
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`the corpus has at least 300 cases of every kind (${cases.length})`, () => {
    assert.ok(cases.length >= 300);
    for (const kind of [
      "v3.0 service",
      "v3.0 consumer app",
      "v3.1",
      "static tags",
      "dynamic tags",
      "chain",
      "update sequence",
      "loopback tags",
      "ipv6",
      "quirk",
      "broken rule",
    ]) {
      assert.ok(
        cases.some((c) => c.name.startsWith(kind)),
        kind,
      );
    }
    assert.equal(verdicts.length, cases.length);
  });

  it("every case: the same providers kept (v3.1: the same outcomes) as Dubbo's routers", () => {
    const failures: string[] = [];
    cases.forEach((c, i) => {
      const v = verdicts[i];
      if (v.error) {
        failures.push(`${c.name}: the oracle failed: ${v.error}`);
        return;
      }
      const o = ours(c);
      const same = c.repeat ? sameDraws(v.outcomes ?? {}, o.outcomes, c.repeat) : (v.kept ?? []).join(",") === o.kept.join(",");
      if (!same) {
        failures.push(
          [
            `── ${c.name}: Java kept ${c.repeat ? JSON.stringify(v.outcomes) : `[${v.kept}]`}, ours ${c.repeat ? JSON.stringify(Object.fromEntries(o.outcomes)) : `[${o.kept}]`}`,
            `case: ${JSON.stringify(c, null, 1)}`,
            `Java's trace:\n${v.trace}`,
            `ours:\n${o.text}`,
          ].join("\n"),
        );
      }
    });
    assert.equal(failures.length, 0, `${failures.length} of ${cases.length} cases disagree:\n${failures.join("\n\n")}`);
  });
});
