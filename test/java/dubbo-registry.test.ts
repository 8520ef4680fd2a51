import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { freePort, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { Interop, InteropProvider, QUIET } from "./dubbo-interop.js";
import { type JavaAnswer, JavaConsumer, JavaProvider, dubboJavaSkip, requireDubboJava } from "./dubbo-peer.js";

/**
 * A real Dubbo 3.3.1 Java consumer and provider on a real ZooKeeper beside ours (one JVM each).
 *
 * Our providers, each a server of its own registering one group of org.triplerpc.interop.Interop:
 * `ts-all` (registry.level both: interface and application level), `ts-interface`, `ts-instance`
 * (application level: the app names keep the Dubbo register-mode words);
 * `ts-interface` also registers group `blue`, which the Java provider (register-mode all, its
 * default) serves too. The Java consumer's references each pin a migration step (Dubbo's
 * `migration.step`): APPLICATION_FIRST (its default), FORCE_APPLICATION, FORCE_INTERFACE.
 */

const MODES = ["all", "interface", "instance"] as const;
/** Each Dubbo register-mode word as our `registry.level`. */
const LEVEL = { all: "both", interface: "interface", instance: "application" } as const;
const STEPS = ["APPLICATION_FIRST", "FORCE_APPLICATION", "FORCE_INTERFACE"] as const;

/** Which of our registrations a Java consumer at each migration step finds (and which not). */
const FINDS: Record<(typeof STEPS)[number], Record<(typeof MODES)[number], boolean>> = {
  APPLICATION_FIRST: { all: true, interface: true, instance: true },
  FORCE_APPLICATION: { all: true, interface: false, instance: true },
  FORCE_INTERFACE: { all: true, interface: true, instance: false },
};

describe("Dubbo Java and ours on ZooKeeper: every migration step and discovery mode", { skip: dubboJavaSkip() || zookeeperMissing() }, () => {
  let zk: ZooKeeperServer;
  let registry: string;
  const servers: TripleServer[] = [];
  let consumer: JavaConsumer;
  let provider: JavaProvider;

  before(async () => {
    requireDubboJava();
    zk = await ZooKeeperServer.start();
    registry = zk.address();
    for (const mode of MODES) {
      const services: object[] = [{ implementation: new InteropProvider(`ts-${mode}`), group: `ts-${mode}` }];
      if (mode === "interface") services.push({ implementation: new InteropProvider("ts-interface-blue"), group: "blue" });
      const server = createServer({ logger: QUIET, services, registry: { address: registry, application: `ts-${mode}`, level: LEVEL[mode] } });
      await server.listen({ port: 0, host: "127.0.0.1" });
      servers.push(server);
    }
    [consumer, provider] = await Promise.all([
      JavaConsumer.start("java-consumer", registry),
      freePort().then((port) => JavaProvider.start(port, { registry, app: "java-provider" })),
    ]);
    // Every reference made at once: each waits for its first addresses (seconds at APPLICATION_FIRST).
    await Promise.all([...STEPS.flatMap((step) => MODES.map((m) => whoami(step, `ts-${m}`))), ...STEPS.map((step) => whoami(step, "blue"))]);
  });
  after(async () => {
    await Promise.all([consumer?.stop(), provider?.stop()]);
    await Promise.all(servers.map((s) => s.close()));
    await zk?.destroy();
  });

  const whoami = (migration: string, group: string): Promise<JavaAnswer> =>
    consumer.call({ registry, migration, group, serialization: "hessian2", op: "whoami" });

  /** The answer once the reference found a provider (discovery takes a moment), or the last failure. */
  async function found(migration: string, group: string): Promise<JavaAnswer> {
    let a = await whoami(migration, group);
    for (let i = 0; i < 80 && a.error; i++) {
      await sleep(250);
      a = await whoami(migration, group);
    }
    return a;
  }

  for (const step of STEPS) {
    it(`a Java consumer at ${step} finds ${MODES.filter((m) => FINDS[step][m]).join(", ")}; not ${MODES.filter((m) => !FINDS[step][m]).join(", ") || "—"}`, async () => {
      for (const mode of MODES.filter((m) => FINDS[step][m])) {
        const a = await found(step, `ts-${mode}`);
        assert.equal(a.ok, `ts-${mode}`, `${step} ${mode}: ${JSON.stringify(a.error)}`);
      }
      // Once the others answer, the reference of a layout this step does not read finds nothing.
      for (const mode of MODES.filter((m) => !FINDS[step][m])) {
        for (let i = 0; i < 3; i++) {
          const a = await whoami(step, `ts-${mode}`);
          assert.match(a.error?.message ?? "", /No provider available/, `${step} ${mode}: ${JSON.stringify(a)}`);
          await sleep(200);
        }
      }
    });
  }

  it("APPLICATION_FIRST prefers application level: beside a Java provider there, an interface-only provider of the same service gets no call", async () => {
    const tally = async (step: string) => {
      const seen = new Map<string, number>();
      await found(step, "blue");
      for (const a of await Promise.all(Array.from({ length: 24 }, () => whoami(step, "blue")))) {
        seen.set(String(a.ok ?? a.error?.message), (seen.get(String(a.ok ?? a.error?.message)) ?? 0) + 1);
      }
      return seen;
    };
    assert.deepEqual([...(await tally("APPLICATION_FIRST")).keys()], ["blue"]);
    // At interface level both are listed, and Dubbo's random balancer calls both.
    assert.deepEqual([...(await tally("FORCE_INTERFACE")).keys()].sort(), ["blue", "ts-interface-blue"]);
  });

  for (const discovery of ["both", "application", "interface"] as const) {
    it(`our client with discovery "${discovery}" finds the Java provider (its version 2.0.0 registration)`, async () => {
      const c = createClient(Interop, {
        version: "2.0.0",
        serialization: "hessian2",
        logger: QUIET,
        timeoutMs: 10_000,
        registry: { address: registry, level: discovery },
      });
      try {
        assert.equal(await c.whoami(), "v2");
        assert.equal(await c.hello("zk"), "hello zk from v2");
      } finally {
        await closeClient(c);
      }
    });
  }
});
