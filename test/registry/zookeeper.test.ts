import * as assert from "node:assert/strict";
import * as os from "node:os";
import { after, before, describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, FailoverError, type TripleServer } from "../../src/index.js";
import { VERSION as VERSION_FOR_TESTS } from "../../src/protocol/version.js";
import { kazooMissing, kazooRead, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { ECHO_SERVICE, EchoService, loadLoop, stopAllLoads, waitFor } from "./services.js";
import type { ConsumerExtra, ProviderExtra } from "../helpers/registry-options.js";

const skip = zookeeperMissing() ?? kazooMissing();
const PROVIDERS_DIR = `/dubbo/${ECHO_SERVICE}/providers`;
const CONSUMERS_DIR = `/dubbo/${ECHO_SERVICE}/consumers`;

describe("registry: ZooKeeper in Dubbo's interface-level layout", { skip }, () => {
  let zk: ZooKeeperServer;
  const servers: TripleServer[] = [];
  const clients: object[] = [];

  async function provider(id: string, extra: ProviderExtra = {}): Promise<TripleServer> {
    const s = createServer({ services: [new EchoService(id)], ...extra, registry: { address: zk.address(4000), application: "demo", ...extra.registry } });
    servers.push(s);
    await s.listen({ port: 0 });
    return s;
  }

  function consumer(extra: ConsumerExtra = {}) {
    const c = createClient(EchoService, { ...extra, registry: { address: zk.address(4000), application: "demo-consumer", ...extra.registry } });
    clients.push(c);
    return c;
  }

  before(async () => {
    zk = await ZooKeeperServer.start();
  });
  after(async () => {
    await stopAllLoads();
    await Promise.all(clients.map((c) => closeClient(c)));
    await Promise.all(servers.map((s) => s.close()));
    await zk.destroy();
  });

  it("a provider's node appears with Dubbo's URL, read back by kazoo; its weight reaches the consumer; the node goes on close()", async () => {
    const s = await provider("p1", { registry: { weight: 150 } });
    const read = kazooRead(zk.hostPort, PROVIDERS_DIR, ["/dubbo", `/dubbo/${ECHO_SERVICE}`, PROVIDERS_DIR]);
    assert.deepEqual(read.dirs, { "/dubbo": 0, [`/dubbo/${ECHO_SERVICE}`]: 0, [PROVIDERS_DIR]: 0 }, "persistent parents");
    assert.equal(read.children.length, 1);
    const node = read.children[0];
    assert.notEqual(node.ephemeralOwner, 0, "the provider node is ephemeral");
    const port = s.address.port;
    assert.match(node.url, new RegExp(`^tri://127\\.0\\.0\\.1:${port}/${ECHO_SERVICE.replace(/\./g, "\\.")}\\?anyhost=false&application=demo&`));
    const { timestamp, pid, ...rest } = node.params;
    assert.match(timestamp, /^\d{13}$/);
    assert.equal(pid, String(process.pid));
    assert.deepEqual(rest, {
      anyhost: "false",
      application: "demo",
      deprecated: "false",
      dubbo: "2.0.2",
      dynamic: "true",
      generic: "false",
      interface: ECHO_SERVICE,
      methods: "fail,sayHello,whoami",
      "prefer.serialization": "hessian2,fastjson2",
      release: VERSION_FOR_TESTS,
      serialization: "hessian2",
      // Written by providers that also register at application level (registerMode "all", the default), as Dubbo does.
      "service-name-mapping": "true",
      side: "provider",
      weight: "150",
    });
    // Parameters sorted by key, as Dubbo's URL.toFullString writes them; the name is URLEncoder's.
    const keys = node.url
      .split("?")[1]
      .split("&")
      .map((kv) => kv.split("=")[0]);
    assert.deepEqual(keys, [...keys].sort());
    assert.ok(node.name.startsWith("tri%3A%2F%2F127.0.0.1%3A"), node.name);
    // The weight reaches the consumer's balancers.
    const c = consumer();
    assert.equal(await c.sayHello("ann"), "hello ann from p1");
    assert.deepEqual(
      clientProviders(c).map((p) => [p.port, p.weight]),
      [[port, 150]],
    );
    await s.close();
    assert.deepEqual(kazooRead(zk.hostPort, PROVIDERS_DIR).children, []);
  });

  it("version and group go into the URL; a consumer only sees the providers of its version and group", async () => {
    const s = createServer({
      services: [{ implementation: new EchoService("v2"), version: "2.0.0", group: "blue" }],
      registry: { address: zk.address(4000), application: "demo" },
    });
    servers.push(s);
    await s.listen({ port: 0 });
    const node = kazooRead(zk.hostPort, PROVIDERS_DIR).children.find((c) => c.params.version === "2.0.0");
    assert.ok(node);
    assert.equal(node.params.group, "blue");
    const plain = await provider("plain");
    const blue = consumer({ version: "2.0.0", group: "blue" });
    assert.equal(await blue.whoami(), "v2");
    const none = consumer();
    assert.equal(await none.whoami(), "plain");
    assert.deepEqual(
      clientProviders(blue).map((p) => p.port),
      [s.address.port],
    );
    assert.deepEqual(
      clientProviders(none).map((p) => p.port),
      [plain.address.port],
    );
    await Promise.all([s.close(), plain.close()]);
  });

  it("a consumer follows providers live: registers itself, spreads calls, sees a new provider within a second, survives a graceful close under load", async () => {
    const a = await provider("a");
    await provider("b");
    const c = consumer();
    assert.ok(["a", "b"].includes(await c.whoami()));
    await waitFor(() => kazooRead(zk.hostPort, CONSUMERS_DIR).children.length > 0, 5000, "the consumer node");
    const mine = kazooRead(zk.hostPort, CONSUMERS_DIR).children.find((n) => n.params.application === "demo-consumer");
    assert.ok(mine, "the consumer registered itself");
    assert.match(mine.url, new RegExp(`^consumer://[^/]+/${ECHO_SERVICE.replace(/\./g, "\\.")}\\?`));
    assert.equal(mine.params.category, "consumers");
    assert.equal(mine.params.side, "consumer");
    assert.equal(mine.params.check, "false");

    const load = loadLoop(() => c.whoami());
    await waitFor(() => (load.counts.get("a") ?? 0) > 20 && (load.counts.get("b") ?? 0) > 20, 5000, "calls on a and b");
    // One-sided and generous: the client learns of providers by ZooKeeper's watch only (it
    // never polls), so without it the new provider would never get calls; 5 s leaves a loaded
    // machine room (it was 1 s).
    await provider("c");
    await waitFor(() => (load.counts.get("c") ?? 0) > 0, 5000, "the new provider to get calls");
    await a.close(); // under load: its node goes first, then it drains
    load.reset();
    await waitFor(() => (load.counts.get("b") ?? 0) > 20 && (load.counts.get("c") ?? 0) > 20, 5000, "calls after the close");
    assert.equal(load.counts.get("a") ?? 0, 0, "the closed provider gets no new calls");
    await load.stop();
    assert.deepEqual(load.failures, [], "no call failed");
    assert.deepEqual(
      clientProviders(c)
        .map((p) => p.address)
        .sort(),
      servers
        .filter((s) => s !== a && !s.draining)
        .map((s) => `127.0.0.1:${s.address.port}`)
        .sort(),
    );

    const before = kazooRead(zk.hostPort, CONSUMERS_DIR).children.length;
    await closeClient(c);
    clients.splice(clients.indexOf(c), 1);
    assert.equal(kazooRead(zk.hostPort, CONSUMERS_DIR).children.length, before - 1, "the consumer node is gone");
  });

  it("the failover sentence names the registry", async () => {
    const c = consumer({ retries: 1 });
    await assert.rejects(c.fail(), (e: unknown) => {
      assert.ok(e instanceof FailoverError);
      assert.match(e.message, new RegExp(`from the registry zookeeper://127\\.0\\.0\\.1:${zk.port} on the consumer`));
      return true;
    });
  });

  it("announces the machine's address when listening on 0.0.0.0, or the configured registryHost", async () => {
    const lan =
      Object.values(os.networkInterfaces())
        .flat()
        .find((a) => a && a.family === "IPv4" && !a.internal)?.address ?? "127.0.0.1";
    const s = createServer({ services: [new EchoService("any")], registry: zk.address(4000) });
    servers.push(s);
    await s.listen({ port: 0, host: "0.0.0.0" });
    const t = createServer({
      services: [{ implementation: new EchoService("named"), version: "named" }],
      registry: { address: zk.address(4000), host: "provider.example" },
    });
    servers.push(t);
    await t.listen({ port: 0 });
    const nodes = kazooRead(zk.hostPort, PROVIDERS_DIR).children;
    const any = nodes.find((n) => n.url.includes(`:${s.address.port}/`));
    assert.ok(any);
    assert.equal(any.params.anyhost, "true");
    assert.ok(any.url.startsWith(`tri://${lan}:${s.address.port}/`), any.url);
    assert.ok(nodes.some((n) => n.url.startsWith(`tri://provider.example:${t.address.port}/`)));
    await Promise.all([s.close(), t.close()]);
  });
});
