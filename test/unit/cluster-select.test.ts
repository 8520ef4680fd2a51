import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ClusterContext, type Invocation, selectProvider } from "../../src/client/cluster/cluster.js";
import { type Directory, StaticDirectory } from "../../src/client/cluster/directory.js";
import { loadBalancer } from "../../src/client/loadbalance/balancers.js";
import type { LoadBalancer } from "../../src/client/loadbalance/load-balancer.js";
import { Provider } from "../../src/transport/client/provider.js";
import { Code } from "../../src/protocol/code.js";
import { RpcError } from "../../src/protocol/rpc-error.js";

function invocation(): Invocation {
  return {
    method: { serviceName: "s", path: "/s/m", name: "m" } as any,
    args: [],
    signal: new AbortController().signal,
    committed: false,
    retries: 2,
    streaming: false,
  };
}

/** A round-robin balancer that records the candidates it was offered. */
function spyBalancer(): LoadBalancer & { offered: Provider[][] } {
  const rr = loadBalancer("roundrobin");
  const offered: Provider[][] = [];
  return {
    name: "spy",
    offered,
    select(candidates, inv) {
      offered.push([...candidates]);
      return rr.select(candidates, inv);
    },
  };
}

function context(directory: Directory, balancer: LoadBalancer = loadBalancer("roundrobin")): ClusterContext {
  return { directory, balancer, retries: 2, forks: 2, downBackoffMs: 1000, failbackIntervalMs: 1000 };
}

/** Three providers a, b, c in a static directory. */
function three() {
  const dir = new StaticDirectory(["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]);
  const [a, b, c] = dir.providers;
  return { dir, a, b, c };
}

/** The providers picked over `n` selections. */
function picks(ctx: ClusterContext, tried: ReadonlySet<Provider>, n = 12): Set<Provider> {
  const out = new Set<Provider>();
  for (let i = 0; i < n; i++) out.add(selectProvider(invocation(), ctx, tried));
  return out;
}

describe("selectProvider", () => {
  it("a single provider is returned as is, even when down and already tried", () => {
    const only = new Provider("127.0.0.1:1");
    only.markDown(60_000);
    const spy = spyBalancer();
    const ctx = context({ registry: "static", list: () => [only] }, spy);
    assert.equal(selectProvider(invocation(), ctx, new Set([only])), only);
    assert.equal(spy.offered.length, 0, "no balancer for one provider");
  });

  it("no provider at all is unavailable, naming the service and the registry", () => {
    const empty: Directory = { registry: "zk", list: () => [] };
    assert.throws(
      () => selectProvider(invocation(), context(empty), new Set()),
      (e: unknown) => e instanceof RpcError && e.code === Code.Unavailable && /\bs\b/.test(e.message) && /zk/.test(e.message),
    );
  });

  it("prefers untried healthy providers", () => {
    const { dir, a, b, c } = three();
    b.markDown(60_000);
    const spy = spyBalancer();
    const ctx = context(dir, spy);
    // a tried, b down: only c is untried and healthy.
    assert.deepEqual(picks(ctx, new Set([a])), new Set([c]));
    // Nothing tried: the balancer chooses among the healthy a and c only.
    const s2 = spyBalancer();
    assert.deepEqual(picks(context(dir, s2), new Set()), new Set([a, c]));
    for (const offered of s2.offered) assert.deepEqual(offered, [a, c]);
  });

  it("then healthy providers, when every healthy one was tried", () => {
    const { dir, a, b, c } = three();
    b.markDown(60_000);
    const spy = spyBalancer();
    // b (down) is untried, but a healthy tried provider wins over it.
    assert.deepEqual(picks(context(dir, spy), new Set([a, c])), new Set([a, c]));
    for (const offered of spy.offered) assert.deepEqual(offered, [a, c]);
  });

  it("then untried providers, when all are down", () => {
    const { dir, a, b, c } = three();
    for (const p of [a, b, c]) p.markDown(60_000);
    const spy = spyBalancer();
    assert.deepEqual(picks(context(dir, spy), new Set([a])), new Set([b, c]));
    for (const offered of spy.offered) assert.deepEqual(offered, [b, c]);
    assert.deepEqual(picks(context(dir), new Set([a, b])), new Set([c]));
  });

  it("then any provider, when all are down and tried: the call still gets its attempts", () => {
    const { dir, a, b, c } = three();
    for (const p of [a, b, c]) p.markDown(60_000);
    const spy = spyBalancer();
    assert.deepEqual(picks(context(dir, spy), new Set([a, b, c])), new Set([a, b, c]));
    for (const offered of spy.offered) assert.deepEqual(offered, [a, b, c]);
  });

  it("a provider whose back-off expired counts as healthy again", () => {
    const { dir, a, b, c } = three();
    b.markDown(1000, Date.now() - 5000); // down until 4 s ago
    a.markDown(60_000);
    c.markDown(60_000);
    assert.deepEqual(picks(context(dir), new Set()), new Set([b]));
  });

  it("one candidate left skips the balancer", () => {
    const { dir, a, b } = three();
    const spy = spyBalancer();
    assert.equal(selectProvider(invocation(), context(dir, spy), new Set([a, b])), dir.providers[2]);
    assert.equal(spy.offered.length, 0);
  });
});
