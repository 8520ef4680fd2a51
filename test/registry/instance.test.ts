import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, Method, Service, type TripleServer, ZookeeperRegistry } from "../../src/index.js";
import { VERSION } from "../../src/protocol/version.js";
import { calRevision } from "../../src/registry/instance.js";
import { Gate } from "../helpers/gate.js";
import { selfSigned } from "../helpers/tls.js";
import { type KazooGet, kazoo, kazooMissing, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { ProviderProcess } from "./children.js";
import { ECHO_SERVICE, EchoService, loadLoop, recordingLogger, stopAllLoads, waitFor } from "./services.js";
import { echoServiceInfo, goInstanceJson, javaInstanceJson, metadataClient, StubProvider } from "./stub-provider.js";
import type { ConsumerExtra, ProviderExtra } from "../helpers/registry-options.js";

const skip = zookeeperMissing() ?? kazooMissing();

/** A service whose one method waits until the test lets it answer. */
@Service("org.example.registry.HoldService")
class HoldService {
  readonly gate = new Gate();

  @Method()
  async hold(): Promise<string> {
    await this.gate.pass();
    return "released";
  }
}

@Service("org.example.registry.LateService")
class LateService {
  @Method()
  async ping(): Promise<string> {
    return "pong";
  }
}

async function get(zk: ZooKeeperServer, p: string): Promise<KazooGet | null> {
  return (await kazoo(zk.hostPort, [{ op: "get", path: p }]))[0] as KazooGet | null;
}

async function children(zk: ZooKeeperServer, p: string): Promise<string[] | null> {
  return (await kazoo(zk.hostPort, [{ op: "children", path: p }]))[0] as string[] | null;
}

describe("registry: application-level (instance) discovery in Dubbo 3's layout", { skip }, () => {
  let zk: ZooKeeperServer;
  const servers: TripleServer[] = [];
  const clients: object[] = [];
  const stubs: StubProvider[] = [];
  const procs: ProviderProcess[] = [];

  async function provider(id: string, extra: ProviderExtra = {}): Promise<TripleServer> {
    const s = createServer({ services: [new EchoService(id)], ...extra, registry: { address: zk.address(4000), application: "demo", ...extra.registry } });
    servers.push(s);
    await s.listen({ port: 0 });
    return s;
  }

  function consumer(extra: ConsumerExtra = {}) {
    const c = createClient(EchoService, {
      ...extra,
      registry: { address: zk.address(4000), application: "demo-consumer", registerConsumer: false, ...extra.registry },
    });
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
    await Promise.all(stubs.map((s) => s.close()));
    await Promise.all(procs.map((p) => p.stop()));
    await zk.destroy();
  });

  it("the revision is MetadataInfo.calAndGetRevision's: MD5 of the app and each service's matchKey, port, path and sorted params", () => {
    const svc = (name: string, group: string, version: string, params: Record<string, string>) => ({
      name,
      group,
      version,
      protocol: "tri",
      port: 50051,
      path: name,
      params,
    });
    const text = "demo" + "blue/org.example.A:1.0.0:tri50051org.example.A{a=1, b=2}" + "org.example.B:tri50051org.example.B{}";
    const expected = createHash("md5").update(text).digest("hex");
    assert.equal(calRevision("demo", [svc("org.example.B", "", "", {}), svc("org.example.A", "blue", "1.0.0", { b: "2", a: "1" })]), expected);
    assert.equal(calRevision("demo", []), "0");
  });

  it("a provider (registerMode all) writes the instance node as Java does, the mapping, and serves MetadataServiceV2 (grpc-js) at the node's revision; run-time services re-publish; close() removes the instance", async () => {
    const s = await provider("p1");
    const port = s.address.port;
    const node = await get(zk, `/services/demo/127.0.0.1:${port}`);
    assert.ok(node, "the instance node exists");
    assert.notEqual(node.ephemeralOwner, 0, "ephemeral");
    const json = JSON.parse(node.data);
    assert.deepEqual(Object.keys(json), ["name", "id", "address", "port", "sslPort", "payload", "registrationTimeUTC", "serviceType", "uriSpec"]);
    assert.equal(json.name, "demo");
    assert.equal(json.id, `127.0.0.1:${port}`);
    assert.equal(json.address, "127.0.0.1");
    assert.equal(json.port, port);
    assert.equal(json.sslPort, null);
    assert.equal(json.uriSpec, null);
    assert.equal(json.serviceType, "DYNAMIC");
    assert.ok(Math.abs(json.registrationTimeUTC - Date.now()) < 60_000);
    assert.deepEqual(Object.keys(json.payload), ["@class", "id", "name", "metadata"]);
    assert.equal(json.payload["@class"], "org.apache.dubbo.registry.zookeeper.ZookeeperInstance");
    assert.equal(json.payload.id, json.id);
    assert.equal(json.payload.name, "demo");
    const meta = json.payload.metadata;
    assert.deepEqual(Object.keys(meta), [...Object.keys(meta)].sort(), "metadata sorted by key");
    const { timestamp, "dubbo.metadata.revision": revision, ...rest } = meta;
    assert.match(timestamp, /^\d{13}$/);
    assert.match(revision, /^[0-9a-f]{32}$/);
    assert.deepEqual(rest, {
      "dubbo.endpoints": `[{"port":${port},"protocol":"tri"}]`,
      "dubbo.metadata-service.url-params": `{"dubbo":"2.0.2","release":"${VERSION}","side":"provider","port":"${port}","protocol":"tri"}`,
      "dubbo.metadata.storage-type": "local",
      "meta-v": "2.0.0",
    });
    assert.equal((await get(zk, `/dubbo/mapping/${ECHO_SERVICE}`))?.data, "demo");
    assert.equal((await get(zk, `/dubbo/mapping/${ECHO_SERVICE}`))?.ephemeralOwner, 0, "the mapping is persistent");
    // Interface level too (registerMode all), with service-name-mapping=true as Java writes it.
    const providers = await children(zk, `/dubbo/${ECHO_SERVICE}/providers`);
    assert.equal(providers?.length, 1);
    assert.match(decodeURIComponent(providers![0]), /service-name-mapping=true/);

    // A grpc-js client of Dubbo's .proto, as Java (version 2.0.0, group = app) and as a plain gRPC client.
    const mc = metadataClient(port);
    try {
      const answer = await mc.get(revision, { "tri-service-version": "2.0.0", "tri-service-group": "demo" });
      assert.equal(answer.app, "demo");
      assert.equal(answer.version, revision, "the answer's version is the instance node's revision");
      assert.deepEqual(Object.keys(answer.services), [`${ECHO_SERVICE}:tri`]);
      const svc = answer.services[`${ECHO_SERVICE}:tri`];
      assert.equal(svc.name, ECHO_SERVICE);
      assert.equal(svc.protocol, "tri");
      assert.equal(svc.port, port);
      assert.equal(svc.path, ECHO_SERVICE);
      assert.equal(svc.params.methods, "fail,sayHello,whoami");
      assert.equal(svc.params.weight, "100");
      assert.equal(svc.params.pid, undefined, "pid and timestamp are not service metadata");
      assert.equal(svc.params.timestamp, undefined);
      // The revision is recomputable from the answer, as a Java consumer would cache it.
      assert.equal(calRevision("demo", Object.values(answer.services)), revision);
      assert.deepEqual((await mc.get("")).version, revision, "no revision: the current metadata");
      assert.deepEqual((await mc.get("nope")).services, {}, "an unknown revision: an empty answer, as Dubbo gives");

      // A service added at run time: a new revision in the node and the service; the mapping extended.
      s.register(new LateService());
      let next = revision;
      for (const deadline = Date.now() + 5000; next === revision && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 50));
        next = JSON.parse((await get(zk, `/services/demo/127.0.0.1:${port}`))!.data).payload.metadata["dubbo.metadata.revision"];
      }
      assert.notEqual(next, revision, "the instance node carries a new revision");
      const later = await mc.get(next, { "tri-service-version": "2.0.0", "tri-service-group": "demo" });
      assert.deepEqual(Object.keys(later.services).sort(), [`${ECHO_SERVICE}:tri`, "org.example.registry.LateService:tri"]);
      assert.equal((await get(zk, "/dubbo/mapping/org.example.registry.LateService"))?.data, "demo");
    } finally {
      mc.close();
    }
    await s.close();
    assert.equal(await get(zk, `/services/demo/127.0.0.1:${port}`), null, "close() removed the instance node");
    assert.deepEqual(await children(zk, `/dubbo/${ECHO_SERVICE}/providers`), []);
  });

  it("close() removes the instance node (and the interface-level node) first, then drains: while a call is still running, both are gone", async () => {
    const hold = new HoldService();
    const s = createServer({ services: [hold], registry: { address: zk.address(4000), application: "closing-app" } });
    servers.push(s);
    await s.listen({ port: 0 });
    const port = s.address.port;
    const node = `/services/closing-app/127.0.0.1:${port}`;
    assert.ok(await get(zk, node), "registered");
    const c = createClient(HoldService, { providers: [`127.0.0.1:${port}`] });
    clients.push(c);
    let answered = false;
    const call = c.hold().then((v) => {
      answered = true;
      return v;
    });
    await waitFor(() => hold.gate.started, 5000, "the call to start");
    const closing = s.close();
    try {
      let gone = false;
      for (const deadline = Date.now() + 3000; !gone && Date.now() < deadline; ) {
        gone = (await get(zk, node)) === null;
        if (!gone) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(gone, "the instance node is removed while the call is still draining");
      assert.deepEqual(await children(zk, "/dubbo/org.example.registry.HoldService/providers"), [], "and the interface-level node");
      assert.equal(answered, false, "the call is still running: the drain comes after");
    } finally {
      hold.gate.open();
    }
    assert.equal(await call, "released", "the drained call is answered");
    await closing;
  });

  it("a service withdrawn at run time (server.unregister): its interface-level node goes, a new revision is published (the one before it was added), MetadataServiceV2 serves it; the mapping stays, as in Dubbo", async () => {
    const s = await provider("w1", { registry: { application: "withdraw-app" } });
    const port = s.address.port;
    const revisionNow = async () =>
      JSON.parse((await get(zk, `/services/withdraw-app/127.0.0.1:${port}`))!.data).payload.metadata["dubbo.metadata.revision"] as string;
    const waitRevision = async (not: string) => {
      let r = not;
      for (const deadline = Date.now() + 5000; r === not && Date.now() < deadline; ) {
        await new Promise((res) => setTimeout(res, 50));
        r = await revisionNow();
      }
      assert.notEqual(r, not, "a new revision in the instance node");
      return r;
    };
    const first = await revisionNow();
    const late = new LateService();
    s.register(late);
    const withLate = await waitRevision(first);
    const lateProviders = "/dubbo/org.example.registry.LateService/providers";
    assert.equal((await children(zk, lateProviders))?.length, 1);
    s.unregister(late);
    const after = await waitRevision(withLate);
    assert.equal(after, first, "the same services as before: the same revision");
    assert.deepEqual(await children(zk, lateProviders), [], "its interface-level node is removed");
    assert.equal(
      (await get(zk, "/dubbo/mapping/org.example.registry.LateService"))?.data.split(",").includes("withdraw-app"),
      true,
      "mappings are never removed",
    );
    const mc = metadataClient(port);
    try {
      const answer = await mc.get(after, { "tri-service-version": "2.0.0", "tri-service-group": "withdraw-app" });
      assert.deepEqual(Object.keys(answer.services), [`${ECHO_SERVICE}:tri`]);
    } finally {
      mc.close();
    }
    await s.close();
  });

  it("a service registered and withdrawn at once leaves no provider node behind (its delete used to overtake the create: one ghost node per round)", async () => {
    const s = await provider("w2", { registry: { application: "withdraw-fast" } });
    const lateProviders = "/dubbo/org.example.registry.LateService/providers";
    for (let i = 0; i < 3; i++) {
      const late = new LateService();
      s.register(late);
      if (i === 1) await new Promise((r) => setImmediate(r));
      s.unregister(late);
    }
    await new Promise((r) => setTimeout(r, 1500));
    const left = ((await children(zk, lateProviders)) ?? []).filter((n) => decodeURIComponent(n).includes(`:${s.address.port}/`));
    assert.deepEqual(left, [], "no node of this server for the withdrawn service");
    await s.close();
  });

  it("registerMode interface writes no instance; instance writes no interface-level node; metadataStorage remote writes the report Java reads", async () => {
    const a = await provider("only-interface", { registry: { application: "mode-iface", level: "interface" } });
    const b = await provider("only-instance", { registry: { application: "mode-inst", level: "application", metadataStorage: "remote", weight: 150 } });
    assert.equal(await children(zk, "/services/mode-iface"), null);
    assert.deepEqual(await children(zk, "/services/mode-inst"), [`127.0.0.1:${b.address.port}`]);
    const urls = ((await children(zk, `/dubbo/${ECHO_SERVICE}/providers`)) ?? []).map((n) => decodeURIComponent(n));
    assert.ok(
      urls.some((u) => u.includes(`:${a.address.port}/`)),
      "the interface-mode provider is listed",
    );
    assert.ok(!urls.some((u) => u.includes(`:${b.address.port}/`)), "the instance-mode provider is not");
    const meta = JSON.parse((await get(zk, `/services/mode-inst/127.0.0.1:${b.address.port}`))!.data).payload.metadata;
    assert.equal(meta["dubbo.metadata.storage-type"], "remote");
    const revision = meta["dubbo.metadata.revision"];
    const report = await get(zk, `/dubbo/metadata/mode-inst/${revision}`);
    assert.ok(report, "the metadata report node /dubbo/metadata/<app>/<revision>");
    assert.equal(report.ephemeralOwner, 0, "persistent, as Java writes it");
    const info = JSON.parse(report.data);
    assert.deepEqual(Object.keys(info), ["app", "revision", "services"]);
    assert.equal(info.app, "mode-inst");
    assert.equal(info.revision, revision);
    assert.deepEqual(Object.keys(info.services), [`${ECHO_SERVICE}:tri`]);
    assert.deepEqual(Object.keys(info.services[`${ECHO_SERVICE}:tri`]), ["name", "protocol", "port", "path", "params"]);
    // A consumer reading only instance level finds b through the report; only interface level, a.
    const inst = consumer({ registry: { level: "application", providedBy: "mode-inst" } });
    assert.equal(await inst.whoami(), "only-instance");
    assert.deepEqual(
      clientProviders(inst).map((p) => [p.port, p.weight]),
      [[b.address.port, 150]],
      "the weight comes from the metadata",
    );
    const iface = consumer({ registry: { level: "interface" } });
    await iface.whoami();
    assert.deepEqual(
      clientProviders(iface).map((p) => p.port),
      [a.address.port],
    );
    await Promise.all([a.close(), b.close()]);
  });

  it("Java-written and dubbo-go-written instances (kazoo) of stub grpc-js providers are found through the mapping and called; their MetadataServiceV2 is asked once per revision, as Java asks", async () => {
    const iface = "org.example.registry.EchoService";
    const javaRev = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
    const goRev = "0f9e8d7c6b5a49382716051a2b3c4d5e";
    const java = await StubProvider.start({ id: "java", app: "java-app", revision: javaRev, services: (p) => echoServiceInfo(iface, p) });
    const go = await StubProvider.start({ id: "go", app: "go-app", revision: goRev, services: (p) => echoServiceInfo(iface, p) });
    // A third application whose service says enabled=false: found, asked for its metadata, never called.
    const off = await StubProvider.start({ id: "off", app: "off-app", revision: goRev, services: (p) => echoServiceInfo(iface, p, { enabled: "false" }) });
    stubs.push(java, go, off);
    await kazoo(zk.hostPort, [
      { op: "delete", path: `/dubbo/mapping/${iface}` },
      { op: "create", path: `/dubbo/mapping/${iface}`, data: "java-app,go-app,off-app" },
      { op: "create", path: `/services/off-app/127.0.0.1:${off.port}`, data: goInstanceJson("off-app", off.port, goRev) },
      { op: "create", path: `/services/java-app/127.0.0.1:${java.port}`, data: javaInstanceJson("java-app", java.port, javaRev) },
      { op: "create", path: `/services/go-app/127.0.0.1:${go.port}`, data: goInstanceJson("go-app", go.port, goRev) },
    ]);
    try {
      const c = consumer({ protocol: "grpc", registry: { level: "application" } });
      const load = loadLoop(() => c.whoami(), 2);
      await waitFor(() => (load.counts.get("java") ?? 0) > 10 && (load.counts.get("go") ?? 0) > 10, 10_000, "calls on both stubs");
      await load.stop();
      assert.deepEqual(load.failures, []);
      assert.deepEqual(
        clientProviders(c)
          .map((p) => p.port)
          .sort(),
        [java.port, go.port].sort(),
      );
      assert.deepEqual(java.metadataCalls, [{ revision: javaRev, version: "2.0.0", group: "java-app" }]);
      assert.deepEqual(go.metadataCalls, [{ revision: goRev, version: "2.0.0", group: "go-app" }]);
      assert.deepEqual(off.metadataCalls, [{ revision: goRev, version: "2.0.0", group: "off-app" }]);
      assert.equal(off.calls, 0, "a disabled service is never called");
    } finally {
      await kazoo(zk.hostPort, [
        { op: "delete", path: `/services/java-app` },
        { op: "delete", path: `/services/go-app` },
        { op: "delete", path: `/services/off-app` },
        { op: "delete", path: `/dubbo/mapping/${iface}` },
      ]);
    }
  });

  it("at application level a client keeps only the tri:// services of its version and group; an instance offering only MetadataService v1 over dubbo:// is skipped with one log line per client", async () => {
    const iface = ECHO_SERVICE;
    const revs = { blue: "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1", plain: "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2", v1: "d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3" };
    const params = { application: "stub", interface: iface, methods: "fail,sayHello,whoami", side: "provider" };
    // vg-blue offers only group blue, version 1.0.0; vg-plain offers the plain service over tri and over dubbo.
    const blue = await StubProvider.start({
      id: "blue",
      app: "vg-blue",
      revision: revs.blue,
      services: (p) => ({ [`blue/${iface}:1.0.0:tri`]: { name: iface, group: "blue", version: "1.0.0", protocol: "tri", port: p, path: iface, params } }),
    });
    const plain = await StubProvider.start({
      id: "plain",
      app: "vg-plain",
      revision: revs.plain,
      services: (p) => ({
        ...echoServiceInfo(iface, p),
        [`${iface}:dubbo`]: { name: iface, group: "", version: "", protocol: "dubbo", port: 20880, path: iface, params },
      }),
    });
    // A pre-3.3 Java instance: no meta-v, its MetadataService on dubbo://. Its stub would answer
    // MetadataServiceV2 if asked: it must not be.
    const v1 = await StubProvider.start({ id: "v1", app: "vg-v1", revision: revs.v1, services: (p) => echoServiceInfo(iface, p) });
    stubs.push(blue, plain, v1);
    const v1Json = JSON.parse(javaInstanceJson("vg-v1", v1.port, revs.v1));
    delete v1Json.payload.metadata["meta-v"];
    v1Json.payload.metadata["dubbo.metadata-service.url-params"] = JSON.stringify({
      version: "1.0.0",
      dubbo: "2.0.2",
      release: "3.2.0",
      side: "provider",
      port: "20881",
      protocol: "dubbo",
    });
    const v1Node = { op: "create" as const, path: `/services/vg-v1/127.0.0.1:${v1.port}`, data: JSON.stringify(v1Json) };
    await kazoo(zk.hostPort, [
      { op: "create", path: `/services/vg-blue/127.0.0.1:${blue.port}`, data: javaInstanceJson("vg-blue", blue.port, revs.blue) },
      { op: "create", path: `/services/vg-plain/127.0.0.1:${plain.port}`, data: javaInstanceJson("vg-plain", plain.port, revs.plain) },
      v1Node,
    ]);
    const lines = { blue: [] as string[], plain: [] as string[] };
    const logger = (into: string[]) => ({ info: () => {}, error: (_o: object, m: string) => into.push(m), warn: (_o: object, m: string) => into.push(m) });
    const base = { protocol: "grpc" as const, registry: { level: "application" as const, providedBy: "vg-blue,vg-plain,vg-v1" } };
    try {
      const cBlue = consumer({ ...base, version: "1.0.0", group: "blue", logger: logger(lines.blue) });
      const cPlain = consumer({ ...base, logger: logger(lines.plain) });
      assert.equal(await cBlue.whoami(), "blue");
      assert.equal(await cPlain.whoami(), "plain");
      await waitFor(() => lines.blue.length > 0 && lines.plain.length > 0, 5000, "the v1 instance to be logged");
      assert.deepEqual(
        clientProviders(cBlue).map((p) => p.port),
        [blue.port],
        "only group blue, version 1.0.0",
      );
      assert.deepEqual(
        clientProviders(cPlain).map((p) => p.port),
        [plain.port],
        "only the plain tri:// service (not blue's, not the dubbo:// one)",
      );
      // The v1 instance changes twice more: still skipped, and not logged again.
      for (let i = 0; i < 2; i++) {
        await kazoo(zk.hostPort, [{ op: "delete", path: v1Node.path }, v1Node]);
        await new Promise((r) => setTimeout(r, 300));
      }
      for (const l of [lines.blue, lines.plain]) {
        const about = l.filter((m) => m.includes("vg-v1"));
        assert.equal(about.length, 1, about.join("\n"));
        assert.match(about[0], new RegExp(`instance 127\\.0\\.0\\.1:${v1.port} of vg-v1 skipped: .*dubbo:// version 1.*only MetadataServiceV2 over Triple`));
      }
      assert.deepEqual(v1.metadataCalls, [], "a v1 instance's MetadataServiceV2 is never asked");
      assert.equal(v1.calls, 0);
      for (let i = 0; i < 5; i++) assert.equal(await cPlain.whoami(), "plain", "the skipped instance disturbs no call");
    } finally {
      await kazoo(zk.hostPort, [
        { op: "delete", path: "/services/vg-blue" },
        { op: "delete", path: "/services/vg-plain" },
        { op: "delete", path: "/services/vg-v1" },
      ]);
    }
  });

  it("clients of two interfaces of one application sharing a registry ask for a revision's metadata once between them", async () => {
    const rev = "a6a6a6a6a6a6a6a6a6a6a6a6a6a6a6a6";
    const late = "org.example.registry.LateService";
    const both = await StubProvider.start({
      id: "both",
      app: "both-app",
      revision: rev,
      services: (p) => ({ ...echoServiceInfo(ECHO_SERVICE, p), ...echoServiceInfo(late, p) }),
    });
    stubs.push(both);
    await kazoo(zk.hostPort, [{ op: "create", path: `/services/both-app/127.0.0.1:${both.port}`, data: javaInstanceJson("both-app", both.port, rev) }]);
    const registry = new ZookeeperRegistry(zk.address(4000));
    try {
      const opts = {
        protocol: "grpc" as const,
        registry: { address: registry, level: "application" as const, providedBy: "both-app", registerConsumer: false },
      };
      const echo = createClient(EchoService, opts);
      const other = createClient(LateService, opts);
      clients.push(echo, other);
      assert.equal(await echo.whoami(), "both");
      await waitFor(() => clientProviders(other).length === 1, 5000, "the second client's provider");
      assert.equal(both.metadataCalls.length, 1, "one GetMetadataInfo for both clients");
    } finally {
      await registry.close();
      await kazoo(zk.hostPort, [{ op: "delete", path: "/services/both-app" }]);
    }
  });

  it("metadata that could not be had (MetadataServiceV2 failing at first) is asked for again, without any change in ZooKeeper, and the instance is then called", async () => {
    const rev = "f5f5f5f5f5f5f5f5f5f5f5f5f5f5f5f5";
    const flaky = await StubProvider.start({
      id: "flaky",
      app: "flaky-app",
      revision: rev,
      services: (p) => echoServiceInfo(ECHO_SERVICE, p),
      failMetadata: 2,
    });
    stubs.push(flaky);
    await kazoo(zk.hostPort, [{ op: "create", path: `/services/flaky-app/127.0.0.1:${flaky.port}`, data: javaInstanceJson("flaky-app", flaky.port, rev) }]);
    const lines: string[] = [];
    const logger = { info: () => {}, error: (_o: object, m: string) => lines.push(m), warn: (_o: object, m: string) => lines.push(m) };
    try {
      const c = consumer({ protocol: "grpc", logger, registry: { level: "application", providedBy: "flaky-app" } });
      // Two failures: asked again after 1 s, then 2 s.
      await waitFor(() => clientProviders(c).length === 1, 8000, "the instance to be found once its metadata answers");
      assert.equal(await c.whoami(), "flaky");
      assert.equal(flaky.metadataCalls.length, 3, "two failures, then one answer");
      const about = lines.filter((m) => m.includes("flaky-app"));
      assert.equal(about.length, 1, about.join("\n"));
      assert.match(about[0], /skipped: no metadata for revision f5f5.*; asking again later$/);
    } finally {
      await kazoo(zk.hostPort, [{ op: "delete", path: "/services/flaky-app" }]);
    }
  });

  it("TLS: a client with TLS options reads an https:// provider's MetadataServiceV2 over TLS and calls it at application level", async () => {
    const { key, cert } = selfSigned();
    const s = createServer({
      services: [new EchoService("tls-1")],
      tls: { key, cert },
      registry: { address: zk.address(4000), application: "tls-app", level: "application" },
    });
    servers.push(s);
    await s.listen({ port: 0 });
    const lines: string[] = [];
    const logger = { info: () => {}, error: (_o: object, m: string) => lines.push(m), warn: (_o: object, m: string) => lines.push(m) };
    const c = consumer({ tls: { ca: cert }, logger, registry: { level: "application", providedBy: "tls-app" } });
    assert.equal(await c.whoami(), "tls-1");
    assert.deepEqual(
      clientProviders(c).map((p) => [p.secure, p.port]),
      [[true, s.address.port]],
    );
    assert.deepEqual(
      lines.filter((m) => m.includes("tls-app")),
      [],
      "no metadata failure",
    );
    await s.close();
  });

  it("warm-up holds at both levels: a provider announcing warmup (ms) ramps its weight from its timestamp (the instance's at application level), as Dubbo's balancers do", async () => {
    const rev = "e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4";
    const warm = 4000;
    // The clients' clock, moved by hand: exact weights, and no waiting for the ramp to end.
    const clock = { t: Date.now(), now: () => clock.t };
    const since = clock.t - warm / 2;
    const iStub = await StubProvider.start({ id: "warm-iface", app: "warm-iface", revision: rev, services: (p) => echoServiceInfo(ECHO_SERVICE, p) });
    const aStub = await StubProvider.start({
      id: "warm-inst",
      app: "warm-inst",
      revision: rev,
      services: (p) => echoServiceInfo(ECHO_SERVICE, p, { warmup: String(warm), weight: "100" }),
    });
    stubs.push(iStub, aStub);
    const url = `tri://127.0.0.1:${iStub.port}/${ECHO_SERVICE}?application=warm-iface&dubbo=2.0.2&interface=${ECHO_SERVICE}&methods=fail,sayHello,whoami&side=provider&timestamp=${since}&warmup=${warm}&weight=100`;
    const node = `/dubbo/${ECHO_SERVICE}/providers/${encodeURIComponent(url)}`;
    const inst = JSON.parse(javaInstanceJson("warm-inst", aStub.port, rev));
    inst.payload.metadata.timestamp = String(since);
    await kazoo(zk.hostPort, [
      { op: "create", path: node, data: "127.0.0.1" },
      { op: "create", path: `/services/warm-inst/127.0.0.1:${aStub.port}`, data: JSON.stringify(inst) },
    ]);
    try {
      const cIface = consumer({ protocol: "grpc", registry: { level: "interface" }, clock });
      const cInst = consumer({ protocol: "grpc", registry: { level: "application", providedBy: "warm-inst" }, clock });
      assert.equal(await cIface.whoami(), "warm-iface");
      assert.equal(await cInst.whoami(), "warm-inst");
      const [pIface] = clientProviders(cIface);
      const [pInst] = clientProviders(cInst);
      for (const p of [pIface, pInst]) {
        assert.equal(p.fullWeight, 100);
        assert.deepEqual(p.warmUp, { since, ms: warm });
        assert.equal(p.weight, 50, "half-way through the warm-up: half the weight");
      }
      clock.t += warm / 4;
      for (const p of [pIface, pInst]) assert.equal(p.weight, 75, "three quarters through: three quarters of the weight");
      clock.t += warm / 4;
      assert.equal(pIface.weight, 100, "warm: the full weight");
      assert.equal(pInst.weight, 100);
      assert.equal(clientProviders(cInst)[0], pInst, "the same provider object throughout");
    } finally {
      await kazoo(zk.hostPort, [
        { op: "delete", path: node },
        { op: "delete", path: "/services/warm-inst" },
      ]);
    }
  });

  it("registryWarmupMs announces Dubbo's warmup at both levels: our clients ramp the new server, and a bad value is refused", async () => {
    assert.throws(
      () => createServer({ services: [new EchoService("x")], registry: { address: zk.address(4000), warmupMs: -1 } }),
      /createServer: registry\.warmupMs must be a whole number of milliseconds > 0, got -1/,
    );
    const s = await provider("warming", { registry: { application: "warming-app", warmupMs: 60_000 } });
    const port = s.address.port;
    const names = (await children(zk, `/dubbo/${ECHO_SERVICE}/providers`)) ?? [];
    const url = names.map((n) => decodeURIComponent(n)).find((u) => u.includes(`:${port}/`));
    assert.match(url ?? "", /[?&]warmup=60000(&|$)/, "the interface-level URL carries warmup");
    for (const discovery of ["interface", "application"] as const) {
      const c = consumer({ registry: { level: discovery, providedBy: "warming-app" } });
      await waitFor(() => clientProviders(c).some((x) => x.port === port), 5000, `${discovery}: the warming server listed`);
      const [p] = clientProviders(c).filter((x) => x.port === port);
      assert.equal(p.warmUp?.ms, 60_000, discovery);
      assert.ok(p.weight >= 1 && p.weight < 20, `${discovery}: a server started a moment ago weighs little: ${p.weight}`);
      assert.equal(p.fullWeight, 100);
    }
    await s.close();
  });

  it("mixed cluster under load: a Java-style stub (instance + interface) and two triple-rpc processes (all); auto spreads over three, one address one provider; SIGKILL of ours loses no call; a new one gets calls within a second", async () => {
    const rev = "11112222333344445555666677778888";
    const java = await StubProvider.start({ id: "java", app: "java-mixed", revision: rev, services: (p) => echoServiceInfo(ECHO_SERVICE, p) });
    stubs.push(java);
    const javaUrl = `tri://127.0.0.1:${java.port}/${ECHO_SERVICE}?application=java-mixed&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false&interface=${ECHO_SERVICE}&methods=fail,sayHello,whoami&release=3.3.1&service-name-mapping=true&side=provider&timestamp=${Date.now()}`;
    const javaNode = encodeURIComponent(javaUrl);
    await kazoo(zk.hostPort, [
      { op: "create", path: `/services/java-mixed/127.0.0.1:${java.port}`, data: javaInstanceJson("java-mixed", java.port, rev) },
      { op: "create", path: `/dubbo/${ECHO_SERVICE}/providers/${javaNode}`, data: "127.0.0.1" },
    ]);
    const env = { APP: "node-mixed", REGISTRY_LEVEL: "both" };
    const [p1, p2] = await Promise.all([ProviderProcess.start(zk.address(4000), "n1", env), ProviderProcess.start(zk.address(4000), "n2", env)]);
    procs.push(p1, p2);
    // Java writes the mapping with its own compare-and-set; here kazoo adds java-mixed to what ours wrote.
    const mapping = (await get(zk, `/dubbo/mapping/${ECHO_SERVICE}`))?.data ?? "";
    assert.ok(mapping.split(",").includes("node-mixed"), mapping);
    await kazoo(zk.hostPort, [
      { op: "delete", path: `/dubbo/mapping/${ECHO_SERVICE}` },
      { op: "create", path: `/dubbo/mapping/${ECHO_SERVICE}`, data: `${mapping},java-mixed` },
    ]);
    try {
      const c = consumer({ protocol: "grpc", retries: 3 });
      const load = loadLoop(() => c.whoami(), 4);
      await waitFor(() => ["java", "n1", "n2"].every((id) => (load.counts.get(id) ?? 0) > 20), 10_000, "calls on all three");
      const ports = clientProviders(c)
        .map((p) => p.port)
        .sort();
      assert.deepEqual(ports, [java.port, p1.port, p2.port].sort(), "each address once, though listed at both levels");
      await p1.stop("SIGKILL");
      load.reset();
      await waitFor(() => (load.counts.get("java") ?? 0) > 20 && (load.counts.get("n2") ?? 0) > 20, 10_000, "calls after the kill");
      // LISTENING is printed once listen() resolved, i.e. once the provider is registered: from
      // then on it must get calls within a second (process start-up time is not counted, nor doubled).
      const p3 = await ProviderProcess.start(zk.address(4000), "n3", env);
      procs.push(p3);
      await waitFor(() => (load.counts.get("n3") ?? 0) > 0, 1000, "the new provider to get calls within a second of registering");
      await load.stop();
      assert.deepEqual(load.failures, [], "no call failed");
    } finally {
      await Promise.all(procs.map((p) => p.stop("SIGTERM")));
      await kazoo(zk.hostPort, [
        { op: "delete", path: `/services/java-mixed` },
        { op: "delete", path: `/dubbo/${ECHO_SERVICE}/providers/${javaNode}` },
      ]);
    }
  });

  it("two processes racing to add their application to the same interface mappings: both names kept in every mapping (compare-and-set retried)", async () => {
    const child = path.join(__dirname, "mapping-child.js");
    // The mappings exist already (another application wrote them): both racers read "seed" and
    // both try to write "seed,<own>", so one set must fail on the version and be redone. (Were the
    // nodes missing, the loser of the create would simply append: no compare-and-set needed.)
    const names = Array.from({ length: 30 }, (_, i) => `/dubbo/mapping/org.example.race.Service${i}`);
    await kazoo(
      zk.hostPort,
      names.map((p) => ({ op: "create" as const, path: p, data: "seed" })),
    );
    const startAt = Date.now() + 1500;
    const run = (app: string) =>
      new Promise<void>((resolve, reject) => {
        const proc = spawn(process.execPath, [child], {
          env: { ...process.env, REGISTRY: zk.address(4000), APP: app, START_AT: String(startAt), COUNT: "30" },
        });
        let out = "";
        proc.stdout.on("data", (d: Buffer) => {
          out += d.toString();
        });
        proc.on("exit", (code) => (code === 0 && out.includes("DONE") ? resolve() : reject(new Error(`${app} exited ${code}: ${out}`))));
      });
    await Promise.all([run("racer-a"), run("racer-b")]);
    const got = (await kazoo(
      zk.hostPort,
      Array.from({ length: 30 }, (_, i) => ({ op: "get" as const, path: `/dubbo/mapping/org.example.race.Service${i}` })),
    )) as (KazooGet | null)[];
    for (const g of got) assert.deepEqual(g?.data.split(",").sort(), ["racer-a", "racer-b", "seed"], "no application dropped");
    assert.ok(
      got.every((g) => g?.version === 2),
      "each mapping written exactly twice: one append per racer",
    );
  });

  it("instance level, ZooKeeper restarted under load (same session): zero failed calls; afterwards a new instance is seen", async () => {
    const address = zk.address(4000);
    const opts = { registry: { address, application: "restart-app", level: "application" as const } };
    const a = createServer({ services: [new EchoService("r1")], ...opts });
    servers.push(a);
    await a.listen({ port: 0 });
    const c = consumer({ registry: { address, level: "application", providedBy: "restart-app" } });
    const load = loadLoop(() => c.whoami(), 2);
    await waitFor(() => (load.counts.get("r1") ?? 0) > 10, 5000, "calls on r1");
    await zk.stop();
    const calls = load.counts.get("r1") ?? 0;
    await new Promise((r) => setTimeout(r, 1000)); // shorter than the session: the same one resumes
    assert.ok((load.counts.get("r1") ?? 0) > calls + 10, "calls went on while ZooKeeper was down");
    await zk.resume();
    const b = createServer({ services: [new EchoService("r2")], ...opts });
    servers.push(b);
    await b.listen({ port: 0 });
    await waitFor(() => (load.counts.get("r2") ?? 0) > 0, 10_000, "calls on the instance started after the restart");
    await load.stop();
    assert.deepEqual(load.failures, [], "no call failed");
    await Promise.all([a.close(), b.close()]);
  });

  it("instance level keeps issue 17's failure behaviour: empty protection, and after a session expiry (ZooKeeper wiped) the instance node, mapping and report are re-created and consumers follow again", async () => {
    const address = zk.address(2000);
    const opts = { registry: { address, application: "expiry-app", level: "application" as const, metadataStorage: "remote" as const } };
    const a = createServer({ services: [new EchoService("e1")], ...opts });
    servers.push(a);
    await a.listen({ port: 0 });
    const { lines, logger } = recordingLogger();
    const c = consumer({ registry: { address, level: "application", providedBy: "expiry-app" }, logger });
    assert.equal(await c.whoami(), "e1");
    const node = `/services/expiry-app/127.0.0.1:${a.address.port}`;
    const owner = (await get(zk, node))!.ephemeralOwner;
    // An operator deletes the instance node: the consumer keeps its last provider (empty protection).
    await kazoo(zk.hostPort, [{ op: "delete", path: node }]);
    await waitFor(() => lines.some((l) => l.includes("(empty protection)")), 5000, "the consumer to see the empty list");
    for (let i = 0; i < 5; i++) assert.equal(await c.whoami(), "e1");
    await zk.stop();
    zk.wipe();
    await zk.resume();
    const deadline = Date.now() + 15_000;
    let back: KazooGet | null = null;
    while (!back && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      back = await get(zk, node);
    }
    assert.ok(back, "the instance node is re-created");
    assert.notEqual(back.ephemeralOwner, owner, "by a new session");
    assert.equal((await get(zk, `/dubbo/mapping/${ECHO_SERVICE}`))?.data.split(",").includes("expiry-app"), true, "the mapping is re-written");
    const revision = JSON.parse(back.data).payload.metadata["dubbo.metadata.revision"];
    assert.ok(await get(zk, `/dubbo/metadata/expiry-app/${revision}`), "the metadata report is re-written");
    const b = createServer({ services: [new EchoService("e2")], ...opts });
    servers.push(b);
    await b.listen({ port: 0 });
    await waitFor(() => clientProviders(c).length === 2, 10_000, "the consumer to see the new instance");
    await Promise.all([a.close(), b.close()]);
  });
});
