import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createServer, type TripleServer } from "../../src/index.js";
import { ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { type JavaLoad, tally, until } from "./dubbo-cluster-helpers.js";
import { InteropProvider, QUIET } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaConsumer, requireDubboJava } from "./dubbo-peer.js";

/**
 * A real Dubbo 3.3.1 Java consumer on a real ZooKeeper following our providers of group `follow`
 * at each migration step: one added, one closed under load. One JVM (the consumer).
 */

const STEPS = ["APPLICATION_FIRST", "FORCE_APPLICATION", "FORCE_INTERFACE"] as const;

describe("a Dubbo Java consumer on ZooKeeper follows our providers added and closed", { skip: dubboJavaSkip() || zookeeperMissing() }, () => {
  let zk: ZooKeeperServer;
  let registry: string;
  let consumer: JavaConsumer;
  const ours = new Map<string, TripleServer>();

  /**
   * Our provider `tag` of group `follow`. t1, the one closed, waits 5 s between its unregistration
   * and its drain (`unregisterDelayMs`), as docs/registry.md tells operators of Java consumers:
   * Dubbo's failover does not retry a Triple call that failed on a connection going away.
   */
  async function startOurs(tag: string): Promise<void> {
    const server = createServer({
      logger: QUIET,
      registry: { address: registry, application: "ts-follow", unregisterDelayMs: tag === "t1" ? 5000 : 0 },
      services: [{ implementation: new InteropProvider(tag), group: "follow" }],
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    ours.set(tag, server);
  }

  before(async () => {
    requireDubboJava();
    zk = await ZooKeeperServer.start();
    registry = zk.address();
    [consumer] = await Promise.all([JavaConsumer.start("java-consumer", registry), startOurs("t1")]);
  });
  after(async () => {
    await consumer?.stop();
    await Promise.all([...ours.values()].map((s) => s.close()));
    await zk?.destroy();
  });

  const javaCall = (migration: string, extra: Record<string, unknown> = {}) =>
    consumer.call({ registry, migration, group: "follow", serialization: "hessian2", retries: 2, op: "whoami", ...extra });

  const javaWho = (step: string) => async () => {
    const a = await javaCall(step);
    if (a.error) throw new Error(`${a.error.class}: ${a.error.message}`);
    return String(a.ok);
  };

  it("the Java consumer at each migration step finds our provider", async () => {
    for (const step of STEPS) await until(javaWho(step), "t1", step);
  });

  it("a provider of ours added: the Java consumer calls it at each migration step", async () => {
    await startOurs("t2");
    const took = await Promise.all(STEPS.map((step) => until(javaWho(step), "t2", step)));
    for (const step of STEPS) assert.deepEqual([...(await tally(javaWho(step), 32)).keys()].sort(), ["t1", "t2"], step);
    console.log(`# the Java consumer called the added provider after ${took.join(", ")} ms (${STEPS.join(", ")})`);
  });

  it("one of ours closed (unregisterDelayMs 5000) while the Java consumer calls at each step: no call fails, then it gets none", async () => {
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
});
