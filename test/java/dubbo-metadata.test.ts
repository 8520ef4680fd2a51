import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { freePort, kazoo, kazooMissing, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { WhoAmI } from "./dubbo-cluster-helpers.js";
import { InteropProvider, QUIET } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaConsumer, JavaProvider, requireDubboJava } from "./dubbo-peer.js";

/**
 * Remote metadata (the metadata report on ZooKeeper, `/dubbo/metadata/<app>/<revision>`) both
 * ways, at application level only (every provider here registers `instance`): our provider with
 * `metadataStorage: "remote"` found by a Dubbo 3.3.1 Java consumer at FORCE_APPLICATION, and a
 * Java provider with `dubbo.application.metadata-type=remote` found by our `instance` client.
 */

interface Got {
  data: string;
}

describe("remote metadata between Dubbo Java and ours", { skip: dubboJavaSkip() || zookeeperMissing() || kazooMissing() }, () => {
  let zk: ZooKeeperServer;
  let registry: string;
  let server: TripleServer;
  let consumer: JavaConsumer;
  let provider: JavaProvider;

  before(async () => {
    requireDubboJava();
    zk = await ZooKeeperServer.start();
    registry = zk.address();
    server = createServer({
      logger: QUIET,
      registry: { address: registry, application: "ts-remote", level: "application", metadataStorage: "remote" },
      services: [{ implementation: new InteropProvider("ts-remote"), group: "remote" }],
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    [consumer, provider] = await Promise.all([
      JavaConsumer.start("java-consumer", registry),
      freePort().then((port) =>
        JavaProvider.start(port, { registry, app: "java-remote", mode: "instance", tag: "java-remote" }, ["-Ddubbo.application.metadata-type=remote"]),
      ),
    ]);
  });
  after(async () => {
    await Promise.all([consumer?.stop(), provider?.stop()]);
    await server?.close();
    await zk?.destroy();
  });

  /** The application's one instance node (its JSON) and the metadata reports under /dubbo/metadata/<app>. */
  async function published(app: string): Promise<{ instance: Record<string, unknown>; revisions: string[] }> {
    const [children] = (await kazoo(zk.hostPort, [{ op: "children", path: `/services/${app}` }])) as [string[] | null];
    assert.equal(children?.length, 1, `/services/${app}: ${JSON.stringify(children)}`);
    const [node, revisions] = (await kazoo(zk.hostPort, [
      { op: "get", path: `/services/${app}/${children[0]}` },
      { op: "children", path: `/dubbo/metadata/${app}` },
    ])) as [Got, string[] | null];
    return { instance: JSON.parse(node.data), revisions: revisions ?? [] };
  }

  const revisionOf = (instance: Record<string, unknown>): string =>
    String(((instance.payload as Record<string, unknown>).metadata as Record<string, string>)["dubbo.metadata.revision"]);
  const storageOf = (instance: Record<string, unknown>): string =>
    String(((instance.payload as Record<string, unknown>).metadata as Record<string, string>)["dubbo.metadata.storage-type"]);

  it("our provider with metadataStorage remote is found by a Java consumer at FORCE_APPLICATION (the report at /dubbo/metadata/ts-remote/<revision>)", async () => {
    const { instance, revisions } = await published("ts-remote");
    assert.equal(storageOf(instance), "remote");
    assert.deepEqual(revisions, [revisionOf(instance)]);
    let a = await consumer.call({ registry, migration: "FORCE_APPLICATION", group: "remote", serialization: "hessian2", op: "whoami" });
    for (let i = 0; i < 80 && a.error; i++) {
      await sleep(250);
      a = await consumer.call({ registry, migration: "FORCE_APPLICATION", group: "remote", serialization: "hessian2", op: "whoami" });
    }
    assert.equal(a.ok, "ts-remote", JSON.stringify(a.error));
  });

  it("a Java provider with metadata-type remote is found by our instance-level client (it reads /dubbo/metadata/java-remote/<revision>)", async () => {
    const { instance, revisions } = await published("java-remote");
    assert.equal(storageOf(instance), "remote");
    assert.ok(revisions.includes(revisionOf(instance)), `${JSON.stringify(revisions)} has ${revisionOf(instance)}`);
    const c = createClient(WhoAmI, { serialization: "hessian2", logger: QUIET, timeoutMs: 10_000, registry: { address: registry, level: "application" } });
    try {
      assert.equal(await c.whoami(), "java-remote");
    } finally {
      await closeClient(c);
    }
  });
});
