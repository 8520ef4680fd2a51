import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countFailure, OUTLIER_DEFAULTS, type OutlierSettings, outlierSettings } from "../../src/client/cluster/outlier.js";
import { loadBalancer } from "../../src/client/loadbalance/balancers.js";
import { Provider } from "../../src/transport/client/provider.js";

const S: OutlierSettings = { consecutiveFailures: 5, baseEjectionMs: 1000, maxEjectionMs: 2500, maxEjectionPercent: 50 };

function providers(n: number): Provider[] {
  return Array.from({ length: n }, (_, i) => new Provider(`127.0.0.1:${i + 1}`));
}

function fail(p: Provider, all: Provider[], times = 1): void {
  for (let i = 0; i < times; i++) countFailure(p, all, S, undefined);
}

describe("outlier detection", () => {
  it("ejects after `consecutiveFailures` in a row; an answer in between starts the count again", () => {
    const all = providers(3);
    const [a] = all;
    fail(a, all, 4);
    assert.ok(!a.isEjected());
    a.answered();
    fail(a, all, 4);
    assert.ok(!a.isEjected());
    fail(a, all);
    assert.ok(a.isEjected());
    assert.ok(!a.available(Date.now()));
  });

  it("ejects at most maxEjectionPercent of the providers, and never the last one", () => {
    const two = providers(2);
    fail(two[0], two, 5);
    fail(two[1], two, 5);
    assert.deepEqual(
      two.map((p) => p.isEjected()),
      [true, false],
      "half of two: one",
    );
    const one = providers(1);
    fail(one[0], one, 50);
    assert.ok(!one[0].isEjected(), "the only provider stays");
    const all = providers(4);
    const everything: OutlierSettings = { ...S, maxEjectionPercent: 100 };
    for (const p of all) for (let i = 0; i < 5; i++) countFailure(p, all, everything, undefined);
    assert.equal(all.filter((p) => p.isEjected()).length, 3, "100 % still leaves one provider");
  });

  it("after the ejection: probation, one call at a time; a failure ejects again for longer (capped), an answer readmits", () => {
    const all = providers(2);
    const [a] = all;
    // Each ejection's end, bracketed by the clock read just before and after the failure that
    // set it: exact however long the machine took between the two (no slack of 100 ms).
    const ejection = (failures?: number) => {
      const before = Date.now();
      fail(a, all, failures);
      return { before, after: Date.now(), until: a.ejectedUntil };
    };
    const within = (e: { before: number; after: number; until: number }, ms: number) => e.until >= e.before + ms && e.until <= e.after + ms;
    const first = ejection(5);
    assert.ok(within(first, 1000), `first ejection ${JSON.stringify(first)}`);
    a.ejectedUntil = Date.now() - 1; // the ejection ran out
    assert.ok(a.available(Date.now()), "the probe may go");
    a.begin(performance.now());
    assert.ok(!a.available(Date.now()), "one probe at a time");
    a.end(performance.now());
    const second = ejection(); // the probe failed: out again at once, for 2 × base
    assert.ok(within(second, 2000), `second ejection ${JSON.stringify(second)}`);
    a.ejectedUntil = Date.now() - 1;
    const third = ejection();
    assert.ok(within(third, 2500), `third ejection capped: ${JSON.stringify(third)}`);
    a.ejectedUntil = Date.now() - 1;
    a.answered();
    assert.equal(a.ejectedUntil, 0);
    assert.ok(a.available(Date.now()));
    a.begin(performance.now());
    assert.ok(a.available(Date.now()), "readmitted: no limit on calls in flight");
  });

  it("options: defaults, false turns it off, bad values are refused", () => {
    assert.deepEqual(outlierSettings(undefined), OUTLIER_DEFAULTS);
    assert.equal(outlierSettings(false), undefined);
    assert.equal(outlierSettings({ consecutiveFailures: 3 })?.consecutiveFailures, 3);
    assert.throws(() => outlierSettings({ maxEjectionPercent: 150 }), /maxEjectionPercent/);
    assert.throws(() => outlierSettings({ consecutiveFailures: 0 }), /consecutiveFailures/);
    assert.throws(() => outlierSettings(true as never), /outlierDetection/);
  });
});

describe("peakewma", () => {
  const inv = { method: { path: "/s/m" } } as never;

  it("prefers the provider that answers faster", () => {
    const [fast, slow] = providers(2);
    const now = performance.now();
    fast.recordLatency(1, now);
    slow.recordLatency(50, now);
    const lb = loadBalancer("peakewma");
    for (let i = 0; i < 50; i++) assert.equal(lb.select([fast, slow], inv), fast);
  });

  it("avoids a provider whose calls stopped coming back, before any of them times out", () => {
    const [hung, ok] = providers(2);
    const now = performance.now();
    hung.recordLatency(1, now);
    ok.recordLatency(1, now);
    for (let i = 0; i < 3; i++) hung.begin(now - 200); // three calls waiting for 200 ms
    for (let i = 0; i < 10; i++) ok.begin(now - 1); // busier, but answering
    const lb = loadBalancer("peakewma");
    for (let i = 0; i < 50; i++) assert.equal(lb.select([hung, ok], inv), ok);
  });

  it("is the default balancer", () => {
    assert.equal(loadBalancer(undefined).name, "peakewma");
  });
});
