import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, type TripleServer, ZookeeperRegistry } from "../../src/index.js";
import { encodeComponent } from "../../src/registry/url.js";
import { type KazooGet, kazoo, kazooMissing, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { ECHO_SERVICE, EchoService, loadLoop, recordingLogger, stopAllLoads, waitFor } from "./services.js";

const skip = zookeeperMissing() ?? kazooMissing();
const PROVIDERS_DIR = `/dubbo/${ECHO_SERVICE}/providers`;


/** A hostile MetadataServiceV2: answers every call with `answer`. */
async function hostileMetadata(answer: (stream: http2.ServerHttp2Stream) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.resume();
    answer(stream);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        // Sessions still open would keep close() waiting.
        setTimeout(r, 500).unref();
      }),
  };
}

function instanceNode(o: { address: unknown; port: unknown; revision: string; metaPort?: number; storage?: string }): string {
  const urlParams = JSON.stringify({ port: String(o.metaPort ?? o.port), protocol: "tri" });
  return JSON.stringify({
    name: "hostile-app",
    id: `${o.address}:${o.port}`,
    address: o.address,
    port: o.port,
    payload: {
      id: "x",
      name: "hostile-app",
      metadata: {
        "dubbo.metadata.revision": o.revision,
        "dubbo.metadata.storage-type": o.storage ?? "local",
        "dubbo.metadata-service.url-params": urlParams,
        "meta-v": "2.0.0",
      },
    },
  });
}

describe("registry: a consumer against garbage and hostile registry data", { skip }, () => {
  let zk: ZooKeeperServer;
  const servers: TripleServer[] = [];
  const clients: object[] = [];
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);

  before(async () => {
    zk = await ZooKeeperServer.start();
    process.on("unhandledRejection", onRejection);
  });
  after(async () => {
    process.off("unhandledRejection", onRejection);
    await stopAllLoads();
    await Promise.all(clients.map((c) => closeClient(c)));
    await Promise.all(servers.map((s) => s.close()));
    await zk.destroy();
  });

  async function provider(id: string, app: string): Promise<TripleServer> {
    const s = createServer({ services: [new EchoService(id)], registry: zk.address(4000), application: app });
    servers.push(s);
    await s.listen({ port: 0, host: "127.0.0.1" });
    return s;
  }

  /** A consumer (its registry log kept) calling under load until provider `first` answers. */
  async function consumer(discovery: "interface" | "instance" | "auto", first: string, providedBy?: string, waitMs = 8000) {
    const { lines, logger } = recordingLogger();
    const registry = new ZookeeperRegistry(zk.address(4000), { logger });
    const c = createClient(EchoService, { registry, discovery, providedBy, application: "c", registerConsumer: false });
    clients.push(c);
    const load = loadLoop(() => c.whoami(), 2);
    await waitFor(() => (load.counts.get(first) ?? 0) > 5, waitMs, `calls on ${first}`);
    return { c, lines, load };
  }

  /** A consumer of the hostile-app's instances, calling until inst1 answers. */
  const hostileAppConsumer = () => consumer("instance", "inst1", "hostile-app");

  it("interface level: provider nodes that are not URLs, bad escapes, absurd ports, IPv6 garbage, huge names are skipped; calls go on and the list still follows changes", async () => {
    await provider("good1", "iface-app");
    const { c, lines, load } = await consumer("interface", "good1", undefined, 5000);
    const q = `?interface=${ECHO_SERVICE}&side=provider`;
    const bad = [
      "not-a-url",
      "%E0%A4%A",
      "%ZZ%%%",
      encodeComponent(`tri://127.0.0.1:0/${ECHO_SERVICE}${q}`),
      encodeComponent(`tri://127.0.0.1:70000/${ECHO_SERVICE}${q}`),
      encodeComponent(`tri://127.0.0.1:NaN/${ECHO_SERVICE}${q}`),
      encodeComponent(`tri://[zz::zz]:50051/${ECHO_SERVICE}${q}`),
      encodeComponent(`tri://fe80::1%eth0:50051/${ECHO_SERVICE}${q}`),
      encodeComponent(`tri://a b c:50051/${ECHO_SERVICE}${q}`),
      encodeComponent(`tri://127.0.0.1:1/${ECHO_SERVICE}${q}&weight=NaN&warmup=-1&x=${"y".repeat(100_000)}`),
    ];
    await kazoo(zk.hostPort, bad.map((n) => ({ op: "create" as const, path: `${PROVIDERS_DIR}/${n}`, data: "z".repeat(1000) })));
    await new Promise((r) => setTimeout(r, 1500));
    // A provider arriving after the garbage is still found.
    await provider("good2", "iface-app");
    await waitFor(() => (load.counts.get("good2") ?? 0) > 0, 8000, "calls on good2 (the list still follows changes)");
    await load.stop();
    // 127.0.0.1:1 answers nothing: failover covers it; no call may fail.
    assert.deepEqual(load.failures.map(String), []);
    assert.deepEqual(rejections, []);
    assert.ok(lines.length <= bad.length, `log flood: ${lines.length} lines\n${lines.join("\n").slice(0, 3000)}`);
    await kazoo(zk.hostPort, bad.map((n) => ({ op: "delete" as const, path: `${PROVIDERS_DIR}/${n}` })));
    await closeClient(c);
    assert.ok(clientProviders(c).length >= 0);
  });

  it("instance level: instance JSON that is garbage or of the wrong shape, hosts that are no hosts, hostile metadata services and reports: calls go on, no crash", async () => {
    const good = await provider("inst1", "hostile-app");
    const port = good.address.port;
    const { lines, load } = await consumer("instance", "inst1");
    const nodes = (await kazoo(zk.hostPort, [{ op: "children", path: "/services/hostile-app" }]))[0] as string[];
    const mine = (await kazoo(zk.hostPort, [{ op: "get", path: `/services/hostile-app/${nodes[0]}` }]))[0] as KazooGet;
    const revision = JSON.parse(mine.data).payload.metadata["dubbo.metadata.revision"] as string;

    const badMessage = await hostileMetadata((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "13", "grpc-message": "%E0%A4%A%zz" }, { endStream: true });
    });
    const garbage = await hostileMetadata((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 0xff, 0xff]));
    });
    try {
      const bad: [string, string][] = [
        ["json", "{not json"],
        ["null", "null"],
        ["num", "42"],
        ["payloadnull", JSON.stringify({ address: "127.0.0.1", port: 1, payload: null })],
        ["metastring", JSON.stringify({ address: "127.0.0.1", port: 2, payload: { metadata: "abc" } })],
        ["endpoints", JSON.stringify({ address: "127.0.0.1", port: 3, payload: { metadata: { "dubbo.metadata.revision": "r3", "dubbo.endpoints": "{}", "meta-v": "2.0.0" } } })],
        ["portstring", instanceNode({ address: "127.0.0.1", port: "abc", revision })],
        ["proto", `{"__proto__":{"polluted":1},"address":"127.0.0.1","port":4,"payload":{"metadata":{"__proto__":{"x":1},"dubbo.metadata.revision":"r4","meta-v":"2.0.0"}}}`],
        ["hostv6", instanceNode({ address: "zz::zz", port, revision })],
        ["hostspace", instanceNode({ address: "a b", port, revision })],
        ["port70000", instanceNode({ address: "127.0.0.1", port: 70000, revision, metaPort: port })],
        ["badmessage", instanceNode({ address: "127.0.0.1", port: badMessage.port, revision: "badmsg-rev" })],
        ["garbage", instanceNode({ address: "127.0.0.1", port: garbage.port, revision: "garbage-rev" })],
        ["nanport", instanceNode({ address: "127.0.0.1", port: 5, revision: "nan-rev", metaPort: Number.NaN })],
        ["remote", instanceNode({ address: "127.0.0.1", port: 6, revision: "remote-rev", storage: "remote" })],
      ];
      await kazoo(zk.hostPort, [
        { op: "create", path: "/dubbo/metadata/hostile-app/remote-rev", data: "{\"services\": {\"__proto__\": 1, \"x\": {\"name\": " },
        ...bad.map(([id, data]) => ({ op: "create" as const, path: `/services/hostile-app/${id}`, data })),
      ]);
      await new Promise((r) => setTimeout(r, 4000));
      await load.stop();
      assert.deepEqual(load.failures.map(String), []);
      assert.deepEqual(rejections.map(String), []);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.ok(lines.length <= bad.length, `log flood: ${lines.length} lines\n${lines.join("\n").slice(0, 3000)}`);
      // A MetadataService port of "NaN" is refused, not dialled as the host's port 80.
      assert.ok(
        lines.some((l) => /instance 127\.0\.0\.1:5 of hostile-app skipped: .*MetadataService port NaN is not a port/.test(l)),
        lines.join("\n").slice(0, 3000),
      );
      await kazoo(zk.hostPort, bad.map(([id]) => ({ op: "delete" as const, path: `/services/hostile-app/${id}` })));
    } finally {
      await Promise.all([badMessage.close(), garbage.close()]);
    }
  });

  it("auto: a mapping node listing thousands of applications and garbage names: calls go on, no crash, no log flood", async () => {
    const { lines, load } = await consumer("auto", "inst1");
    const mapping = `/dubbo/mapping/${ECHO_SERVICE}`;
    const names = ["iface-app", "hostile-app", "..", ".", "a/b", "/", "a//b", "zookeeper", "x\u0001y", "é", "z".repeat(5000)];
    for (let i = 0; i < 2000; i++) names.push(`app-${i}`);
    await kazoo(zk.hostPort, [
      { op: "delete", path: mapping },
      { op: "create", path: mapping, data: names.join(",") },
    ]);
    await new Promise((r) => setTimeout(r, 6000));
    load.reset();
    await waitFor(() => ["good1", "inst1"].every((id) => (load.counts.get(id) ?? 0) > 3), 20_000, "calls on both providers");
    await load.stop();
    assert.deepEqual(load.failures.map(String), []);
    assert.deepEqual(rejections.map(String), []);
    assert.ok(lines.length <= 20, `log flood: ${lines.length} lines`);
  });

  it("a MetadataServiceV2 answer without end: the consumer stops reading it at 8 MiB; calls go on", async () => {
    const { lines, load } = await hostileAppConsumer();
    let sent = 0;
    const huge = await hostileMetadata((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      const chunk = Buffer.alloc(1 << 20, 1);
      let n = 0;
      const write = () => {
        while (n < 64 && !stream.destroyed) {
          n++;
          sent += chunk.length;
          if (!stream.write(chunk)) return void stream.once("drain", write);
        }
        if (!stream.destroyed) stream.end();
      };
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      write();
    });
    try {
      await kazoo(zk.hostPort, [{ op: "create", path: "/services/hostile-app/huge", data: instanceNode({ address: "127.0.0.1", port: huge.port, revision: "huge-rev" }) }]);
      await waitFor(() => lines.some((l) => l.includes("huge-rev")), 10_000, "the huge answer to be given up");
      const rss = process.memoryUsage().rss;
      await load.stop();
      assert.deepEqual(load.failures.map(String), []);
      assert.deepEqual(rejections.map(String), []);
      assert.ok(sent < 32 << 20, `the consumer read ${sent >> 20} MiB of a metadata answer (rss ${rss >> 20} MiB)`);
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.match(lines[0], /reply over 8388608 bytes/);
      await kazoo(zk.hostPort, [{ op: "delete", path: "/services/hostile-app/huge" }]);
    } finally {
      await huge.close();
    }
  });
  it("a MetadataServiceV2 that trickles its answer: the fetch ends at the metadata timeout; the application's other instances are still followed", async () => {
    const { lines, load } = await hostileAppConsumer();
    const timers: NodeJS.Timeout[] = [];
    const drip = await hostileMetadata((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      timers.push(setInterval(() => !stream.destroyed && stream.write(Buffer.from([0])), 1000));
    });
    try {
      await kazoo(zk.hostPort, [{ op: "create", path: "/services/hostile-app/drip", data: instanceNode({ address: "127.0.0.1", port: drip.port, revision: "drip-rev" }) }]);
      await new Promise((r) => setTimeout(r, 500));
      // A new instance of the same application: found once the trickling fetch gives up.
      await provider("inst2", "hostile-app");
      await waitFor(() => (load.counts.get("inst2") ?? 0) > 0, 15_000, "calls on inst2");
      await load.stop();
      assert.deepEqual(load.failures.map(String), []);
      assert.deepEqual(rejections.map(String), []);
      assert.ok(lines.length <= 1, lines.join("\n"));
      await kazoo(zk.hostPort, [{ op: "delete", path: "/services/hostile-app/drip" }]);
    } finally {
      for (const t of timers) clearInterval(t);
      await drip.close();
    }
  });
});
