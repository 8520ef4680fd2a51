import * as assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { RuleWriter } from "./rule-writer.js";
import { EchoService, recordingLogger, waitFor } from "./services.js";

const skip = zookeeperMissing();
const GROUP = "DUBBO_SERVICEDISCOVERY_MIGRATION";

/**
 * Migration rules as Dubbo Java's MigrationInvoker applies them: APPLICATION_FIRST uses the
 * application level while it lists at least `threshold` × the interface level's addresses, and
 * sends the calls beyond `proportion` % to the interface level; FORCE_APPLICATION moves only when
 * the application level lists enough addresses, unless `force`. Real ZooKeeper.
 */
describe("governance: migration rules' threshold, proportion and force", { skip }, () => {
  let zk: ZooKeeperServer;
  let rules: RuleWriter;
  const servers: TripleServer[] = [];
  const clients: object[] = [];

  async function provider(id: string, registerMode: "all" | "interface"): Promise<TripleServer> {
    const s = createServer({
      services: [new EchoService(id)],
      registry: { address: zk.address(4000), application: "mig-x", level: registerMode === "all" ? "both" : "interface" },
    });
    servers.push(s);
    await s.listen({ port: 0, host: "127.0.0.1" });
    return s;
  }

  async function callsTo(c: { whoami(): Promise<string> }, n: number): Promise<string[]> {
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) seen.add(await c.whoami());
    return [...seen].sort();
  }

  before(async () => {
    zk = await ZooKeeperServer.start();
    rules = await RuleWriter.connect(zk.hostPort);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => closeClient(c)));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  after(async () => {
    rules?.close();
    await zk?.destroy();
  });

  it("APPLICATION_FIRST: the application level while it has threshold × the interface level's addresses, else the interface level; proportion sends the rest of the calls to the interface level", async () => {
    await provider("a", "all");
    await provider("b", "all");
    await provider("c", "interface");
    const c = createClient(EchoService, {
      registry: { address: zk.address(4000), application: "mig-af", providedBy: "mig-x" },
      loadBalance: "roundrobin",
      logger: recordingLogger().logger,
    });
    clients.push(c);
    await waitFor(() => clientProviders(c).length === 3, 15_000, "both layouts merged (auto): a, b, c");
    const rule = (extra: string) => `key: mig-af\nstep: APPLICATION_FIRST\n${extra}`;
    await rules.write("mig-af.migration", rule("threshold: 0.5\n"), GROUP);
    // 2 addresses at application level, 3 at interface level: 2/3 >= 0.5.
    await waitFor(() => clientProviders(c).length === 2, 15_000, "the application level: a and b");
    assert.deepEqual(await callsTo(c, 30), ["a", "b"]);
    await rules.write("mig-af.migration", rule("threshold: 0.9\n"), GROUP);
    await waitFor(() => clientProviders(c).length === 3, 15_000, "2/3 < 0.9: the interface level");
    assert.deepEqual(await callsTo(c, 30), ["a", "b", "c"]);
    await rules.write("mig-af.migration", rule("threshold: 0.5\nproportion: 0\n"), GROUP);
    await waitFor(() => clientProviders(c).length === 2, 15_000, "the application level preferred again");
    assert.deepEqual(await callsTo(c, 30), ["a", "b", "c"], "proportion 0: every call on the interface level");
    await rules.delete("mig-af.migration", GROUP);
    await waitFor(() => clientProviders(c).length === 3, 15_000, "the rule deleted: auto again");
  });

  it("FORCE_APPLICATION with no address at application level: refused with one log line, the interface level stays; force: true moves anyway", async () => {
    await provider("c", "interface");
    const log = recordingLogger();
    const c = createClient(EchoService, {
      registry: { address: zk.address(4000), application: "mig-force", providedBy: "mig-x", level: "interface" },
      logger: log.logger,
    });
    clients.push(c);
    await waitFor(() => clientProviders(c).length === 1, 15_000, "the interface level: c");
    await rules.write("mig-force.migration", "key: mig-force\nstep: FORCE_APPLICATION\n", GROUP);
    await waitFor(() => log.lines.some((l) => /lists 0 provider\(s\) against 1/.test(l)), 15_000, "the refusal logged");
    assert.deepEqual(await callsTo(c, 5), ["c"], "still on the interface level");
    assert.equal(log.lines.filter((l) => /switches/.test(l)).length, 0);
    await rules.write("mig-force.migration", "key: mig-force\nstep: FORCE_APPLICATION\nforce: true\n", GROUP);
    await waitFor(() => log.lines.some((l) => /switches .* from registry.level interface to application/.test(l)), 15_000, "force: moved");
    await rules.delete("mig-force.migration", GROUP);
  });
});
