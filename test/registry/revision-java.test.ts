import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { calRevision, type ServiceInfo } from "../../src/registry/instance.js";
import { type KazooGet, kazoo, kazooMissing, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { EchoService } from "./services.js";
import { metadataClient } from "./stub-provider.js";

/** Dubbo's revision algorithm in Java (TreeMap, TreeMap.toString(), MessageDigest): an independent judge. */
const JAVA_SOURCE = join(__dirname, "../../../test/registry/DubboRevision.java");

const skip = zookeeperMissing() ?? kazooMissing();

/** The revisions Java computes for each application's services (one `java` run for all). */
function javaRevisions(cases: readonly { app: string; services: readonly ServiceInfo[] }[]): string[] {
  const e = encodeURIComponent;
  const lines: string[] = [];
  for (const c of cases) {
    lines.push(`app\t${e(c.app)}`);
    for (const s of c.services) {
      const params = Object.entries(s.params).map(([k, v]) => `${e(k)}=${e(v)}`);
      lines.push(["svc", e(s.name), e(s.group), e(s.version), e(s.protocol), String(s.port), e(s.path), ...params].join("\t"));
    }
    lines.push("end");
  }
  const out = execFileSync("java", [JAVA_SOURCE], { input: `${lines.join("\n")}\n` });
  return out.toString("utf8").trim().split("\n");
}

const svc = (name: string, group: string, version: string, params: Record<string, string>, protocol = "tri", port = 50051): ServiceInfo => ({
  name,
  group,
  version,
  protocol,
  port,
  path: name,
  params,
});

describe("registry: our metadata revision is the one Java computes (MetadataInfo.calAndGetRevision)", { skip }, () => {
  let zk: ZooKeeperServer;
  const servers: TripleServer[] = [];
  before(async () => {
    zk = await ZooKeeperServer.start();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await zk.destroy();
  });

  it("Java's TreeMap order and toString agree with ours: upper before lower case, UTF-16 order beyond the BMP, separators inside values, empty and many services", () => {
    const cases = [
      { app: "demo", services: [] },
      { app: "demo", services: [svc("org.example.B", "", "", {}), svc("org.example.A", "blue", "1.0.0", { b: "2", a: "1" })] },
      {
        app: "ünïcødé-app",
        services: [
          svc("org.example.Z", "", "", { Zeta: "1", alpha: "2", "a.b": "x=y, z", "": "empty key", "\u{1F600}": "astral", "\uFFFD": "bmp" }),
          svc("org.example.Z", "", "2.0.0", { methods: "a,b", weight: "100" }),
          svc("org.example.Z", "Green", "", { "{}": "[]" }, "tri", 1),
          svc("org.example.z", "green", "", {}, "dubbo", 20880),
        ],
      },
    ];
    const java = javaRevisions(cases);
    assert.deepEqual(
      cases.map((c) => calRevision(c.app, c.services)),
      java,
    );
    assert.equal(java[0], "0");
  });

  it("a provider's instance node names the revision Java computes from the metadata its MetadataServiceV2 serves", async () => {
    const s = createServer({
      services: [new EchoService("plain"), { implementation: new EchoService("blue"), version: "1.0.0", group: "blue" }],
      registry: { address: zk.address(4000), application: "revision-app", level: "application", weight: 7 },
    });
    servers.push(s);
    await s.listen({ port: 0 });
    const node = (await kazoo(zk.hostPort, [{ op: "get", path: `/services/revision-app/127.0.0.1:${s.address.port}` }]))[0] as KazooGet;
    const revision = JSON.parse(node.data).payload.metadata["dubbo.metadata.revision"];
    const mc = metadataClient(s.address.port);
    try {
      const answer = await mc.get(revision, { "tri-service-version": "2.0.0", "tri-service-group": "revision-app" });
      assert.equal(Object.keys(answer.services).length, 2);
      assert.deepEqual(javaRevisions([{ app: answer.app, services: Object.values(answer.services) as ServiceInfo[] }]), [revision]);
    } finally {
      mc.close();
    }
  });
});
