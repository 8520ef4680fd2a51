import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, clientProviders, closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { freePort, type KazooGet, kazoo, kazooMissing, kazooRead, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { ProviderProcess } from "./children.js";
import { ECHO_SERVICE, EchoService, loadLoop, recordingLogger, stopAllLoads, waitFor } from "./services.js";

const skip = zookeeperMissing() ?? kazooMissing();
const PROVIDERS_DIR = `/dubbo/${ECHO_SERVICE}/providers`;

describe("registry: providers and ZooKeeper failing under load", { skip }, () => {
  let zk: ZooKeeperServer;
  const children: ProviderProcess[] = [];
  const servers: TripleServer[] = [];
  const clients: object[] = [];
  const SESSION = 2000;

  before(async () => {
    zk = await ZooKeeperServer.start();
  });
  after(async () => {
    await stopAllLoads();
    await Promise.all(clients.map((c) => closeClient(c)));
    await Promise.all([...children.map((c) => c.stop("SIGKILL")), ...servers.map((s) => s.close())]);
    await zk.destroy();
  });

  it("three provider processes, one killed with SIGKILL under load: zero failed calls; a fourth started gets calls", async () => {
    const address = zk.address(SESSION);
    children.push(...(await Promise.all(["k1", "k2", "k3"].map((id) => ProviderProcess.start(address, id)))));
    const c = createClient(EchoService, { registry: { address, application: "kill-test" } });
    clients.push(c);
    try {
      await killOneUnderLoad(c, address);
    } finally {
      // Graceful stops remove the nodes, so the next tests start from an empty list.
      await Promise.all(children.splice(0).map((p) => p.stop("SIGTERM")));
      await waitFor(() => kazooRead(zk.hostPort, PROVIDERS_DIR).children.length === 0, SESSION * 4, "the providers' nodes to go");
    }
  });

  async function killOneUnderLoad(c: Client<EchoService>, address: string): Promise<void> {
    const load = loadLoop(() => c.whoami(), 6);
    await waitFor(() => ["k1", "k2", "k3"].every((id) => (load.counts.get(id) ?? 0) > 10), 5000, "calls on all three");
    await children[0].stop("SIGKILL");
    // Failover covers the gap until the killed provider's session expires and its node goes.
    await waitFor(() => clientProviders(c).length === 2, SESSION * 4, "the killed provider's node to expire");
    load.reset();
    const fourth = await ProviderProcess.start(address, "k4");
    children.push(fourth);
    await waitFor(() => (load.counts.get("k4") ?? 0) > 0, 2000, "calls on the fourth provider");
    await load.stop();
    assert.deepEqual(load.failures, [], "no call failed");
    assert.equal(load.counts.get("k1") ?? 0, 0);
  }

  it("ZooKeeper stopped under load: zero failed calls; after its restart new providers are seen again", async () => {
    const address = zk.address(SESSION);
    const a = createServer({ services: [new EchoService("z1")], registry: address });
    servers.push(a);
    await a.listen({ port: 0 });
    const c = createClient(EchoService, { registry: address, loadBalance: "roundrobin" });
    clients.push(c);
    const load = loadLoop(() => c.whoami(), 4);
    await waitFor(() => (load.counts.get("z1") ?? 0) > 10, 5000, "calls on z1");
    await zk.stop();
    const calls = [...load.counts.values()].reduce((x, y) => x + y, 0);
    await new Promise((r) => setTimeout(r, SESSION * 1.5)); // longer than the session: clients renew it
    assert.ok([...load.counts.values()].reduce((x, y) => x + y, 0) > calls + 10, "calls went on while ZooKeeper was down");
    await zk.resume();
    const b = createServer({ services: [new EchoService("z2")], registry: address });
    servers.push(b);
    await b.listen({ port: 0 });
    await waitFor(() => (load.counts.get("z2") ?? 0) > 0, SESSION * 6, "calls on the provider started after the restart");
    await load.stop();
    assert.deepEqual(load.failures, [], "no call failed");
    await Promise.all([a.close(), b.close()]);
  });

  /**
   * The owning session of the one provider node, once there is one. Read without blocking: a
   * synchronous read polled in a loop holds the event loop long enough, on a loaded machine, for
   * the 2 s sessions of this process to expire (and the node with them).
   */
  async function providerNodeOwner(ms: number, what: string): Promise<number> {
    for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 200))) {
      const [names] = (await kazoo(zk.hostPort, [{ op: "children", path: PROVIDERS_DIR }])) as (string[] | null)[];
      const node = names?.length === 1 ? ((await kazoo(zk.hostPort, [{ op: "get", path: `${PROVIDERS_DIR}/${names[0]}` }]))[0] as KazooGet | null) : null;
      if (node) return node.ephemeralOwner;
      assert.ok(Date.now() < deadline, `timed out after ${ms} ms waiting for ${what}`);
    }
  }

  it("after a session expiry (ZooKeeper replaced by an empty one) the provider nodes are re-created and consumers follow again", async () => {
    const address = zk.address(SESSION);
    const a = createServer({ services: [new EchoService("e1")], registry: address });
    servers.push(a);
    await a.listen({ port: 0 });
    const c = createClient(EchoService, { registry: address });
    clients.push(c);
    assert.equal(await c.whoami(), "e1");
    // listen() resolves after 3 s at most even when the write is slower (a loaded machine), and
    // the client may have found e1 at application level first: wait for the interface-level node.
    const owner = await providerNodeOwner(SESSION * 4, "the provider node to be written");
    await zk.stop();
    zk.wipe();
    await zk.resume();
    assert.notEqual(await providerNodeOwner(SESSION * 5, "the provider node to be re-created"), owner, "written by a new session");
    const b = createServer({ services: [new EchoService("e2")], registry: address });
    servers.push(b);
    await b.listen({ port: 0 });
    await waitFor(() => clientProviders(c).length === 2, SESSION * 4, "the consumer to see the new provider");
    await Promise.all([a.close(), b.close()]);
  });

  it("a list that suddenly becomes empty keeps the last providers (empty protection), saying so once", async () => {
    const address = zk.address(SESSION);
    const { ZookeeperRegistry } = await import("../../src/index.js");
    // The provider's own registry object (shared, so not closed with the server): closing it ends
    // the provider's session and its nodes while the server still answers. (Deleting the nodes by
    // hand would not do: a provider writes its nodes again when another writer deletes them.)
    const providerRegistry = new ZookeeperRegistry(address);
    const a = createServer({ services: [new EchoService("p")], registry: { address: providerRegistry, level: "interface" } });
    servers.push(a);
    await a.listen({ port: 0 });
    const rec = recordingLogger();
    const registry = new ZookeeperRegistry(address, { logger: rec.logger });
    const c = createClient(EchoService, { registry });
    clients.push(c);
    assert.equal(await c.whoami(), "p");
    await providerRegistry.close();
    await waitFor(() => rec.lines.some((l) => l.includes("empty protection")), 3000, "the empty-protection log line");
    for (let i = 0; i < 20; i++) assert.equal(await c.whoami(), "p");
    assert.equal(rec.lines.filter((l) => l.includes("empty protection")).length, 1);
    await a.close();
    await closeClient(c);
    clients.splice(clients.indexOf(c), 1);
    await registry.close();
  });

  it("ZooKeeper down when a server and a client start: listen() still resolves, both catch up once it is up", async () => {
    const port = await freePort();
    const address = `zookeeper://127.0.0.1:${port}?session=${SESSION}`;
    const a = createServer({ services: [new EchoService("late")], registry: address });
    servers.push(a);
    const t = Date.now();
    await a.listen({ port: 0 });
    assert.ok(Date.now() - t < 5000, "listen() does not wait for ZooKeeper for long");
    const c = createClient(EchoService, { registry: address });
    clients.push(c);
    const late = await ZooKeeperServer.start({ port });
    try {
      assert.equal(await c.whoami(), "late");
      assert.equal(kazooRead(late.hostPort, PROVIDERS_DIR).children.length, 1);
      await a.close();
      await closeClient(c);
      clients.splice(clients.indexOf(c), 1);
    } finally {
      await late.destroy();
    }
  });
});
