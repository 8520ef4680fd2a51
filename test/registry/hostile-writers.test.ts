import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, type TripleServer, ZookeeperRegistry } from "../../src/index.js";
import { type KazooGet, kazoo, kazooMissing, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { ECHO_SERVICE, EchoService, loadLoop, recordingLogger, stopAllLoads, waitFor } from "./services.js";

// Hostile registry data, provider side (the consumer side is in hostile.test.ts): another writer
// deletes, replaces or rewrites the nodes a provider keeps written. Its own file, so that the
// two run side by side, each well within the runner's limit per file.
const skip = zookeeperMissing() ?? kazooMissing();
const PROVIDERS_DIR = `/dubbo/${ECHO_SERVICE}/providers`;

describe("registry: a provider whose nodes another writer deletes or rewrites", { skip }, () => {
  let zk: ZooKeeperServer;
  const servers: TripleServer[] = [];
  const clients: object[] = [];
  const registries: ZookeeperRegistry[] = [];

  before(async () => {
    zk = await ZooKeeperServer.start();
  });
  after(async () => {
    await stopAllLoads();
    await Promise.all(clients.map((c) => closeClient(c)));
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(registries.map((r) => r.close()));
    await zk.destroy();
  });

  /** A provider of `app` on its own registry (log kept; failed writes retried every 300 ms). */
  async function provider(id: string, app: string, level: "both" | "application") {
    const { lines, logger } = recordingLogger();
    const registry = new ZookeeperRegistry(zk.address(4000), { logger, retryIntervalMs: 300 });
    registries.push(registry);
    const s = createServer({ services: [new EchoService(id)], registry: { address: registry, application: app, level } });
    servers.push(s);
    await s.listen({ port: 0, host: "127.0.0.1" });
    const instanceDir = `/services/${app}`;
    const instance = `${instanceDir}/${((await kazoo(zk.hostPort, [{ op: "children", path: instanceDir }]))[0] as string[])[0]}`;
    return { s, lines, instance };
  }

  const get = async (path: string) => (await kazoo(zk.hostPort, [{ op: "get", path }]))[0] as KazooGet | null;

  it("its instance node, provider node and mapping entry deleted, replaced or rewritten by another writer are written again at once; calls beside go on", async () => {
    const { instance } = await provider("guarded", "guarded-app", "both");
    const mapping = `/dubbo/mapping/${ECHO_SERVICE}`;
    const providerNode = `${PROVIDERS_DIR}/${((await kazoo(zk.hostPort, [{ op: "children", path: PROVIDERS_DIR }]))[0] as string[])[0]}`;
    const original = (await get(instance))!;
    const c = createClient(EchoService, { registry: { address: zk.address(4000), level: "application", application: "c", registerConsumer: false } });
    clients.push(c);
    const load = loadLoop(() => c.whoami(), 2);
    await waitFor(() => (load.counts.get("guarded") ?? 0) > 5, 8000, "calls on the provider");
    await kazoo(zk.hostPort, [
      { op: "delete", path: instance },
      { op: "delete", path: providerNode },
      { op: "set", path: mapping, data: "someone-else" },
    ]);
    const written = async () => {
      const [i, p, m] = await Promise.all([get(instance), get(providerNode), get(mapping)]);
      return !!i && i.ephemeralOwner !== 0 && !!p && p.ephemeralOwner !== 0 && m?.data === "someone-else,guarded-app";
    };
    const deadline = Date.now() + 3000;
    while (!(await written())) {
      assert.ok(Date.now() < deadline, `not written again within 3 s: ${JSON.stringify(await Promise.all([get(instance), get(providerNode), get(mapping)]))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    load.reset();
    await waitFor(() => (load.counts.get("guarded") ?? 0) > 5, 5000, "calls after the deletes");
    await load.stop();
    assert.deepEqual(load.failures.map(String), []);
    // Its data rewritten (consumers would dial 127.0.0.2), and a persistent node put in its place.
    // (No calls meanwhile: a consumer may see the forged address for the moment it lasts.)
    await kazoo(zk.hostPort, [
      { op: "set", path: instance, data: original.data.replaceAll("127.0.0.1", "127.0.0.2") },
      { op: "delete", path: providerNode },
      { op: "create", path: providerNode, data: "127.0.0.2" },
    ]);
    const until = Date.now() + 3000;
    for (;;) {
      const [i, p] = await Promise.all([get(instance), get(providerNode)]);
      if (i?.data === original.data && p && p.ephemeralOwner !== 0) break;
      assert.ok(Date.now() < until, `not restored within 3 s: ${JSON.stringify([i, p])}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(
      () => clientProviders(c).length === 1 && clientProviders(c)[0].address.includes("127.0.0.1:"),
      3000,
      "the consumer to see the restored instance",
    );
    assert.equal(await c.whoami(), "guarded");
  });

  it("two live registries announcing the same node (one address announced twice) take it from each other at a slowing pace, not as fast as ZooKeeper answers; one line says so", async () => {
    const { lines, logger } = recordingLogger();
    const twins = [new ZookeeperRegistry(zk.address(4000), { logger }), new ZookeeperRegistry(zk.address(4000), { logger })];
    registries.push(...twins);
    const path = "/services/twin-app/127.0.0.1:1";
    await twins[0].registerInstance("twin-app", "127.0.0.1:1", "one");
    const first = (await get(path))!.czxid;
    await twins[1].registerInstance("twin-app", "127.0.0.1:1", "two");
    await new Promise((r) => setTimeout(r, 5000));
    const writes = ((await get(path))?.czxid ?? first) - first;
    // Each take is a delete and a create; backing off 1, 2, 4 s… leaves a few dozen in 5 s.
    assert.ok(writes < 100, `${writes} writes in 5 s`);
    assert.equal(lines.filter((l) => l.includes(`${path} keeps being deleted or changed by another writer`)).length, 1, lines.join("\n"));
    await Promise.all(twins.map((r) => r.close()));
  });

  it("a read-only ACL on its application's directory plus a delete: one error line says why, and the node is written again once the ACL allows it", async () => {
    const { lines, instance } = await provider("acl", "acl-app", "application");
    // world:anyone may no longer create under /services/acl-app (deleting is still allowed).
    await kazoo(zk.hostPort, [
      { op: "acl", path: "/services/acl-app", create: false },
      { op: "delete", path: instance },
    ]);
    await waitFor(() => lines.some((l) => l.includes("refuses to write")), 3000, "the refusal to be logged");
    await new Promise((r) => setTimeout(r, 1000)); // a few retries (every 300 ms): no more lines
    assert.equal(await get(instance), null);
    const refused = lines.filter((l) => l.includes("refuses to write"));
    assert.equal(refused.length, 1, lines.join("\n"));
    assert.match(refused[0], /refuses to write \/services\/acl-app\/127\.0\.0\.1:\d+ \(NO_AUTH: an ACL on \/services\/acl-app or above/);
    await kazoo(zk.hostPort, [{ op: "acl", path: "/services/acl-app", create: true }]);
    const deadline = Date.now() + 3000;
    while (!(await get(instance))) {
      assert.ok(Date.now() < deadline, "not written again within 3 s of the ACL allowing it");
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(() => lines.some((l) => l.includes(`${instance} written again`)), 1000, "the recovery to be logged");
    assert.ok(lines.length <= 3, lines.join("\n"));
  });
});
