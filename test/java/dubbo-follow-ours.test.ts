import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient } from "../../src/index.js";
import { freePort, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { loadLoop, stopAllLoads, waitFor } from "../registry/services.js";
import { tally, until, WhoAmI } from "./dubbo-cluster-helpers.js";
import { QUIET } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaProvider, requireDubboJava } from "./dubbo-peer.js";

/**
 * Our clients on a real ZooKeeper, in each discovery mode, following real Dubbo 3.3.1 Java
 * providers (the registration without version and group): one added, one stopped under load.
 * Two JVMs (the second provider is the one added).
 */

const DISCOVERIES = ["both", "application", "interface"] as const;

describe("our clients on ZooKeeper follow Dubbo Java providers added and stopped", { skip: dubboJavaSkip() || zookeeperMissing() }, () => {
  let zk: ZooKeeperServer;
  let registry: string;
  const java = new Map<string, JavaProvider>();
  const clients = new Map<string, WhoAmI>();

  async function startJava(tag: string): Promise<void> {
    java.set(tag, await JavaProvider.start(await freePort(), { registry, app: "java-follow", tag }));
  }

  before(async () => {
    requireDubboJava();
    zk = await ZooKeeperServer.start();
    registry = zk.address();
    await startJava("j1");
    for (const discovery of DISCOVERIES) {
      // Round robin: each provider listed gets its share, so a tally shows every one.
      clients.set(
        discovery,
        createClient(WhoAmI, {
          serialization: "hessian2",
          loadBalance: "roundrobin",
          logger: QUIET,
          timeoutMs: 10_000,
          registry: { address: registry, level: discovery },
        }),
      );
    }
  });
  after(async () => {
    await stopAllLoads();
    await Promise.all([...clients.values()].map((c) => closeClient(c)));
    await Promise.all([...java.values()].map((j) => j.stop()));
    await zk?.destroy();
  });

  const who = (d: string) => () => (clients.get(d) as WhoAmI).whoami();

  it("each discovery mode finds the Java provider", async () => {
    for (const d of DISCOVERIES) await until(who(d), "j1", d);
  });

  it("a Java provider added: our client calls it in each discovery mode", async () => {
    await startJava("j2");
    // Seconds: a new Dubbo provider announces its start and the default 10-minute warm-up, so its weight starts near 0.
    const took = await Promise.all(DISCOVERIES.map((d) => until(who(d), "j2", d)));
    for (const d of DISCOVERIES) assert.deepEqual([...(await tally(who(d), 32)).keys()].sort(), ["j1", "j2"], d);
    console.log(`# our client called the added Java provider after ${took.join(", ")} ms (${DISCOVERIES.join(", ")})`);
  });

  it("one Java provider stopped while our clients call in each discovery mode: no call fails, then it gets none", async () => {
    const loads = DISCOVERIES.map((d) => loadLoop(who(d), 3));
    const total = (load: (typeof loads)[number]) => [...load.counts.values()].reduce((a, b) => a + b, 0);
    // Counts, not fixed times: every client calls both before the stop, and 50 more calls after it.
    await waitFor(() => loads.every((l) => (l.counts.get("j1") ?? 0) > 0 && (l.counts.get("j2") ?? 0) > 0), 15_000, "calls on j1 and j2");
    await java.get("j1")?.stop();
    java.delete("j1");
    const after = loads.map((l) => total(l) + 50);
    await waitFor(() => loads.every((l, i) => total(l) >= after[i]), 15_000, "50 calls after the stop");
    for (const load of loads) await load.stop();
    for (const [i, load] of loads.entries()) {
      assert.deepEqual(load.failures.map(String), [], DISCOVERIES[i]);
      assert.ok((load.counts.get("j1") ?? 0) > 0 && (load.counts.get("j2") ?? 0) > 0, `${DISCOVERIES[i]}: ${JSON.stringify([...load.counts])}`);
    }
    for (const d of DISCOVERIES) assert.deepEqual([...(await tally(who(d), 32)).keys()], ["j2"], d);
  });
});
