import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { warmUpOf } from "../../src/client/cluster/registry-directory.js";
import { Provider, warmUpWeight } from "../../src/transport/client/provider.js";

describe("warm-up (Dubbo's warmup / timestamp ramp of a provider's weight)", () => {
  it("warmUpWeight is Dubbo's calculateWarmupWeight: uptime / (warmup / weight) rounded down, between 1 and the weight", () => {
    assert.equal(warmUpWeight(30_000, 60_000, 100), 50);
    assert.equal(warmUpWeight(1000, 3000, 7), 2, "(int) (1000 / (3000f / 7)) = 2");
    assert.equal(warmUpWeight(10, 600_000, 100), 1, "never below 1");
    assert.equal(warmUpWeight(-5000, 60_000, 100), 1, "a provider clock ahead of ours: 1, as Dubbo");
    assert.equal(warmUpWeight(60_000, 60_000, 100), 100, "over: the full weight");
    assert.equal(warmUpWeight(30_000, 60_000, 0), 0, "weight 0 stays 0");
  });

  it("a provider's weight ramps during its warm-up and is the full weight after it", () => {
    // A clock moved by hand: no sleeping, and exact weights whatever the machine's load.
    const clock = { t: 1_732_450_000_000, now: () => clock.t };
    const p = new Provider("127.0.0.1:1", 200, { since: clock.t - 500, ms: 1000 }, clock);
    assert.equal(p.fullWeight, 200);
    assert.equal(p.weight, 100, "half-way");
    clock.t += 250;
    assert.equal(p.weight, 150, "three quarters");
    clock.t += 250;
    assert.equal(p.weight, 200);
    assert.equal(new Provider("127.0.0.1:1", 200, { since: Date.now() - 5000, ms: 1000 }).weight, 200, "a warm-up already over");
    assert.equal(new Provider("127.0.0.1:1", 200).weight, 200, "no warm-up");
    assert.throws(() => new Provider("127.0.0.1:1", 100, { since: Date.now(), ms: 0 }), /warmUp needs a finite since \(epoch ms\) and ms > 0/);
  });

  it("a registry URL asks for a warm-up with warmup (ms) and timestamp; without warmup there is none", () => {
    assert.deepEqual(warmUpOf({ warmup: "60000", timestamp: "1732450000000" }), { since: 1732450000000, ms: 60_000 });
    assert.equal(warmUpOf({ timestamp: "1732450000000" }), undefined);
    assert.equal(warmUpOf({ warmup: "60000" }), undefined);
    assert.equal(warmUpOf({ warmup: "abc", timestamp: "1732450000000" }), undefined);
  });
});
