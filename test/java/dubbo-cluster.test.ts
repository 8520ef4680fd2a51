import * as assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { closeClient, createClient } from "../../src/index.js";
import { freePort, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { loadLoop, stopAllLoads } from "../registry/services.js";
import { QUIET } from "./dubbo-interop.js";
import { type JavaLoad, killChild as kill, startChildProvider, WhoAmI } from "./dubbo-cluster-helpers.js";
import { dubboJavaSkip, JavaConsumer, JavaProvider, requireDubboJava } from "./dubbo-peer.js";

/**
 * A mixed cluster on a real ZooKeeper: two Dubbo 3.3.1 Java providers (jA, jB) and two of ours
 * (tA, tB, each a process of its own) serve org.triplerpc.interop.Interop; a Java consumer
 * (failover, 2 retries) and our client (failover, whoami idempotent) call whoami under load while
 * one Java provider and one of ours are SIGKILLed. Counts calls per provider and failures.
 */

describe("a mixed Java + triple-rpc cluster under load, one provider of each SIGKILLed", { skip: dubboJavaSkip() || zookeeperMissing() }, () => {
  let zk: ZooKeeperServer;
  let registry: string;
  let consumer: JavaConsumer;
  const java = new Map<string, JavaProvider>();
  const ours = new Map<string, ChildProcess>();
  let client: WhoAmI;

  before(async () => {
    requireDubboJava();
    zk = await ZooKeeperServer.start();
    registry = zk.address();
    const startJava = async (tag: string) => java.set(tag, await JavaProvider.start(await freePort(), { registry, app: "java-mixed", tag }));
    const startChild = async (tag: string) => ours.set(tag, await startChildProvider(registry, "ts-mixed", tag));
    [consumer] = await Promise.all([JavaConsumer.start("java-consumer", registry), startJava("jA"), startJava("jB"), startChild("tA"), startChild("tB")]);
    client = createClient(WhoAmI, { registry, serialization: "hessian2", logger: QUIET, timeoutMs: 10_000 });
  });
  after(async () => {
    await stopAllLoads();
    if (client) await closeClient(client);
    await Promise.all([consumer?.stop(), ...[...java.values()].map((j) => j.stop())]);
    await Promise.all([...ours.values()].map(kill));
    await zk?.destroy();
  });

  const javaCall = (extra: Record<string, unknown>) => consumer.call({ registry, serialization: "hessian2", retries: 2, op: "whoami", ...extra });

  /**
   * Both consumers call for 4 s; `victim` is SIGKILLed 1.2 s in. Our client must lose no call;
   * the Java consumer loses at most the calls it had in flight on the victim (Dubbo 3.3.1's
   * failover does not retry a Triple call whose stream was cancelled: docs/registry.md), and
   * then none: a 1.5 s load after it fails no call. Answers the Java consumer's failures.
   */
  async function killUnderLoad(victim: string, killIt: () => Promise<void> | void): Promise<number> {
    const javaLoad = javaCall({ op: "load", concurrency: 4, ms: 4000 });
    const ourLoad = loadLoop(() => client.whoami(), 4);
    await sleep(1200);
    await killIt();
    await sleep(2800);
    await ourLoad.stop();
    const j = await javaLoad;
    const jl = j.ok as JavaLoad;
    const report = `${victim} killed. Java consumer: ${JSON.stringify(jl ?? j.error)}; our client: ${JSON.stringify([...ourLoad.counts])}, failures ${ourLoad.failures.length}`;
    console.log(`# ${report}`);
    assert.deepEqual(ourLoad.failures.map(String), [], report);
    assert.ok(jl, report);
    assert.ok(jl.failures <= 4, `at most the Java consumer's 4 calls in flight fail: ${report}`);
    for (const e of jl.errors) assert.match(e, /StatusRpcException: (CANCELLED|UNAVAILABLE|INTERNAL)/, report);
    assert.ok((jl.counts[victim] ?? 0) > 0 && (ourLoad.counts.get(victim) ?? 0) > 0, `both called ${victim} before the kill: ${report}`);
    const next = (await javaCall({ op: "load", concurrency: 4, ms: 1500 })).ok as JavaLoad;
    assert.equal(next?.failures, 0, `the Java consumer after the kill: ${JSON.stringify(next)}`);
    return jl.failures;
  }

  it("both consumers reach all four providers, then our client loses no call while tB, then jB, are SIGKILLed", async () => {
    const all = ["jA", "jB", "tA", "tB"];
    // Each consumer sees the four (discovery takes a moment; a provider up for a second is still warming up).
    const seenJava = new Set<string>();
    const seenOurs = new Set<string>();
    for (let i = 0; i < 150 && (seenJava.size < 4 || seenOurs.size < 4); i++) {
      const batch = await Promise.all(Array.from({ length: 8 }, () => javaCall({})));
      for (const a of batch) if (a.ok) seenJava.add(String(a.ok));
      for (const a of await Promise.all(Array.from({ length: 8 }, () => client.whoami().catch(() => "")))) if (a) seenOurs.add(a);
      await sleep(100);
    }
    assert.deepEqual([...seenJava].sort(), all, "the Java consumer's providers");
    assert.deepEqual([...seenOurs].sort(), all, "our client's providers");

    const f1 = await killUnderLoad("tB", () => kill(ours.get("tB") as ChildProcess));
    const f2 = await killUnderLoad("jB", () => java.get("jB")?.kill());
    console.log(`# the Java consumer's failures: ${f1} when tB was killed, ${f2} when jB was killed`);
    // The survivors take every call now (the dead stay listed until their sessions expire).
    const after = await Promise.all(Array.from({ length: 16 }, () => client.whoami()));
    assert.deepEqual([...new Set(after)].sort(), ["jA", "tA"]);
  });
});
