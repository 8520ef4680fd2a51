import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { freePort, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { loadLoop, stopAllLoads } from "../registry/services.js";
import { type JavaLoad, WhoAmI } from "./dubbo-cluster-helpers.js";
import { InteropProvider, QUIET } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaConsumer, JavaProvider, requireDubboJava } from "./dubbo-peer.js";

/**
 * Providers that come and go, on a real ZooKeeper, between a real Dubbo 3.3.1 Java consumer and
 * provider and ours: a Java consumer at each migration step follows our providers of group
 * `follow` (one added, one closed under load), and our clients in each discovery mode follow the
 * Java providers of the registration without version and group (one added, one stopped under
 * load). One Java consumer JVM; two Java provider JVMs (the second is the one added).
 */

const STEPS = ["APPLICATION_FIRST", "FORCE_APPLICATION", "FORCE_INTERFACE"] as const;
const DISCOVERIES = ["auto", "instance", "interface"] as const;
/** How long a change may take to reach a consumer: Java throttles its notifications (up to 5 s), ZooKeeper under load. */
const FOLLOW_MS = 25_000;

describe("Dubbo Java and ours on ZooKeeper: following providers added and stopped", { skip: dubboJavaSkip() || zookeeperMissing() }, () => {
  let zk: ZooKeeperServer;
  let registry: string;
  let consumer: JavaConsumer;
  const ours = new Map<string, TripleServer>();
  const java = new Map<string, JavaProvider>();
  const clients = new Map<string, WhoAmI>();

  /**
   * Our provider `tag` of group `follow`. t1, the one closed, waits 5 s between its unregistration
   * and its drain (`unregisterDelayMs`), as docs/registry.md tells operators of Java consumers:
   * Dubbo's failover does not retry a Triple call that failed on a connection going away.
   */
  async function startOurs(tag: string): Promise<void> {
    const server = createServer({
      logger: QUIET,
      registry,
      application: "ts-follow",
      unregisterDelayMs: tag === "t1" ? 5000 : 0,
      services: [{ implementation: new InteropProvider(tag), group: "follow" }],
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    ours.set(tag, server);
  }

  async function startJava(tag: string): Promise<void> {
    java.set(tag, await JavaProvider.start(await freePort(), { registry, app: "java-follow", tag }));
  }

  before(async () => {
    requireDubboJava();
    zk = await ZooKeeperServer.start();
    registry = zk.address();
    [consumer] = await Promise.all([JavaConsumer.start("java-consumer", registry), startOurs("t1"), startJava("j1")]);
    for (const discovery of DISCOVERIES) {
      clients.set(discovery, createClient(WhoAmI, { registry, discovery, serialization: "hessian2", loadBalance: "roundrobin", logger: QUIET, timeout: 10_000 }));
    }
  });
  after(async () => {
    await stopAllLoads();
    await Promise.all([...clients.values()].map((c) => closeClient(c)));
    await Promise.all([consumer?.stop(), ...[...java.values()].map((j) => j.stop())]);
    await Promise.all([...ours.values()].map((s) => s.close()));
    await zk?.destroy();
  });

  const javaCall = (migration: string, extra: Record<string, unknown> = {}) =>
    consumer.call({ registry, migration, group: "follow", serialization: "hessian2", retries: 2, op: "whoami", ...extra });

  /** Which providers answer `n` calls at once (answer → calls; failures under their message). */
  async function tally(call: () => Promise<string>, n = 24): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    const answers = await Promise.all(Array.from({ length: n }, () => call().catch((e: Error) => `error: ${e.message}`)));
    for (const a of answers) seen.set(a, (seen.get(a) ?? 0) + 1);
    return seen;
  }

  const javaWho = (step: string) => async () => {
    const a = await javaCall(step);
    if (a.error) throw new Error(`${a.error.class}: ${a.error.message}`);
    return String(a.ok);
  };

  /** Polls until `tag` answers some of a batch of calls; the time it took, ms. */
  async function until(call: () => Promise<string>, tag: string, what: string): Promise<number> {
    const start = Date.now();
    for (;;) {
      const seen = await tally(call, 12);
      if (seen.has(tag)) return Date.now() - start;
      if (Date.now() - start > FOLLOW_MS) assert.fail(`${what}: ${tag} not called within ${FOLLOW_MS} ms (answers: ${JSON.stringify([...seen])})`);
      await sleep(200);
    }
  }

  it("a Java consumer at each migration step finds our provider; each of our discovery modes finds the Java provider", async () => {
    for (const step of STEPS) await until(javaWho(step), "t1", step);
    for (const [discovery, c] of clients) await until(() => c.whoami(), "j1", discovery);
  });

  /** The second Java provider, started (a JVM takes seconds) while the Java consumer follows ours. */
  let j2: Promise<void> | undefined;

  it("a provider of ours added: the Java consumer calls it at each migration step", async () => {
    j2 = startJava("j2");
    j2.catch(() => {}); // awaited by the next test
    await startOurs("t2");
    const took = await Promise.all(STEPS.map((step) => until(javaWho(step), "t2", step)));
    for (const step of STEPS) assert.deepEqual([...(await tally(javaWho(step), 32)).keys()].sort(), ["t1", "t2"], step);
    console.log(`# the Java consumer called the added provider after ${took.join(", ")} ms (${STEPS.join(", ")})`);
  });

  it("a Java provider added: our client calls it in each discovery mode", async () => {
    await (j2 ?? startJava("j2"));
    const took = await Promise.all(DISCOVERIES.map((d) => until(() => (clients.get(d) as WhoAmI).whoami(), "j2", d)));
    for (const [d, c] of clients) assert.deepEqual([...(await tally(() => c.whoami(), 32)).keys()].sort(), ["j1", "j2"], d);
    console.log(`# our client called the added Java provider after ${took.join(", ")} ms (${DISCOVERIES.join(", ")})`);
  });

  it("one of ours closed while the Java consumer calls at each step: no call fails, then it gets none", async () => {
    // The load spans the unregistration (at 1.5 s), the 5 s delay and the drain (at 6.5 s).
    const loads = STEPS.map((step) => javaCall(step, { op: "load", concurrency: 3, ms: 8000 }));
    await sleep(1500);
    await ours.get("t1")?.close();
    ours.delete("t1");
    for (const [i, a] of (await Promise.all(loads)).entries()) {
      const load = a.ok as JavaLoad;
      assert.ok(load, `${STEPS[i]}: ${JSON.stringify(a.error)}`);
      assert.equal(load.failures, 0, `${STEPS[i]}: ${JSON.stringify(load)}`);
      assert.ok((load.counts.t1 ?? 0) > 0 && (load.counts.t2 ?? 0) > 0, `${STEPS[i]}: both called before the close: ${JSON.stringify(load.counts)}`);
    }
    for (const step of STEPS) {
      await until(javaWho(step), "t2", step);
      assert.deepEqual([...(await tally(javaWho(step), 32)).keys()], ["t2"], step);
    }
  });

  it("one Java provider stopped while our clients call in each discovery mode: no call fails, then it gets none", async () => {
    const loads = DISCOVERIES.map((d) => loadLoop(() => (clients.get(d) as WhoAmI).whoami(), 3));
    await sleep(1500);
    await java.get("j1")?.stop();
    java.delete("j1");
    await sleep(1500);
    for (const load of loads) await load.stop();
    for (const [i, load] of loads.entries()) {
      assert.deepEqual(load.failures.map(String), [], DISCOVERIES[i]);
      assert.ok((load.counts.get("j1") ?? 0) > 0 && (load.counts.get("j2") ?? 0) > 0, `${DISCOVERIES[i]}: ${JSON.stringify([...load.counts])}`);
    }
    for (const [d, c] of clients) assert.deepEqual([...(await tally(() => c.whoami(), 32)).keys()], ["j2"], d);
  });
});
