import * as assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, Method, Param, RpcError, Service, type TripleServer } from "../../src/index.js";
import { codeName } from "../../src/protocol/code.js";
import { ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { RuleWriter } from "./rule-writer.js";
import { recordingLogger, waitFor } from "./services.js";

const skip = zookeeperMissing();

const SLOW = "org.example.governance.Slow";
const RULE = `${SLOW}::.configurators`;
/** The providers' handler errors (`fail`) are the point of a test, not news. */
const QUIET = { info() {}, warn() {}, error() {} };

/** A provider whose `nap` sleeps when it is the slow one; `fail` counts its calls. */
@Service(SLOW)
class Slow {
  calls = 0;
  constructor(
    readonly id: string,
    private readonly napMs = 0,
  ) {}

  @Method({ idempotent: true })
  async whoami(): Promise<string> {
    return this.id;
  }

  /** Sleeps `ms` (or the provider's own nap when it has one), then answers its id. */
  @Method({ idempotent: true })
  async nap(@Param("ms") ms: number): Promise<string> {
    await new Promise((r) => setTimeout(r, this.napMs || ms));
    return this.id;
  }

  @Method()
  async fail(): Promise<string> {
    this.calls++;
    throw new Error(`failed on ${this.id}`);
  }
}

/** A service-scope configurator for consumers, as Dubbo Admin writes it. */
function rule(parameters: Record<string, unknown>, providerAddresses?: readonly string[]): string {
  return [
    "configVersion: v3.0",
    "scope: service",
    `key: ${SLOW}`,
    "configs:",
    "  - side: consumer",
    "    addresses: [0.0.0.0]",
    ...(providerAddresses ? [`    providerAddresses: ${JSON.stringify(providerAddresses)}`] : []),
    `    parameters: ${JSON.stringify(parameters)}`,
  ].join("\n");
}

/**
 * Consumer-side configurators that set `timeout`, `<method>.timeout`, `retries` and
 * `loadbalance` (Dubbo Admin's "dynamic config"), applied by our client per attempt in Dubbo
 * Java's precedence, with a real ZooKeeper as registry and config center.
 */
describe("governance: configurators' timeout, retries and loadbalance, per attempt", { skip }, () => {
  let zk: ZooKeeperServer;
  let rules: RuleWriter;
  const servers: TripleServer[] = [];
  const clients: object[] = [];

  async function provider(service: Slow): Promise<TripleServer> {
    const s = createServer({ services: [service], registry: { address: zk.address(4000), application: "tuning-provider" }, logger: QUIET });
    servers.push(s);
    await s.listen({ port: 0, host: "127.0.0.1" });
    return s;
  }

  function consumer(extra: Parameters<typeof createClient>[1] = {}) {
    const log = recordingLogger();
    const c = createClient(Slow, { registry: { address: zk.address(4000), application: "tuning-consumer", level: "interface" }, logger: log.logger, ...extra });
    clients.push(c);
    return { c, lines: log.lines };
  }

  /** Writes a rule and waits until the consumer applied it (its log line). */
  async function apply(lines: string[], text: string | null): Promise<void> {
    const word = text === null ? "was deleted" : "applies";
    const before = lines.filter((l) => l.includes(RULE) && l.includes(word)).length;
    if (text === null) await rules.delete(RULE);
    else await rules.write(RULE, text);
    await waitFor(() => lines.filter((l) => l.includes(RULE) && l.includes(word)).length > before, 15_000, `the rule ${word}`);
  }

  async function outcome(p: Promise<string>): Promise<string> {
    try {
      return await p;
    } catch (e) {
      return codeName(RpcError.from(e).code);
    }
  }

  before(async () => {
    zk = await ZooKeeperServer.start();
    rules = await RuleWriter.connect(zk.hostPort);
  });
  afterEach(async () => {
    await rules.delete(RULE);
    await Promise.all(clients.splice(0).map((c) => closeClient(c)));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  after(async () => {
    rules?.close();
    await zk?.destroy();
  });

  it("timeout: a configurator raises and lowers it over the client's own; <method>.timeout wins over timeout; a call's own timeout wins over both", async () => {
    await provider(new Slow("a"));
    const { c, lines } = consumer({ timeoutMs: 300 });
    await waitFor(() => clientProviders(c).length === 1, 15_000, "the provider");
    assert.equal(await outcome(c.nap(600)), "deadline_exceeded", "the client's 300 ms");
    await apply(lines, rule({ timeout: 3000 }));
    assert.equal(await outcome(c.nap(600)), "a", "raised to 3 s by the configurator");
    await apply(lines, rule({ timeout: 3000, "nap.timeout": 100 }));
    // The outcome, not a time: the nap answers at 400 ms and the service timeout is 3 s, so
    // deadline_exceeded can only come from the 100 ms nap.timeout.
    assert.equal(await outcome(c.nap(400)), "deadline_exceeded", "nap.timeout 100 ms");
    assert.equal(await outcome(c.whoami()), "a", "other methods keep timeout 3000");
    assert.equal(await outcome(c.nap(400, { timeoutMs: 3000 })), "a", "the call's own timeout wins");
    await apply(lines, null);
    assert.equal(await outcome(c.nap(600)), "deadline_exceeded", "the client's 300 ms again");
  });

  it("timeout per provider: an attempt on the provider a configurator names times out on its timeout and an idempotent call fails over", async () => {
    const slow = await provider(new Slow("slow", 800));
    await provider(new Slow("fast"));
    const { c, lines } = consumer({ loadBalance: "roundrobin" });
    await waitFor(() => clientProviders(c).length === 2, 15_000, "both providers");
    await apply(lines, rule({ timeout: 150 }, [`127.0.0.1:${slow.address.port}`]));
    // The answers, not a time: without the 150 ms timeout the slow provider's calls would be
    // answered "slow" (after its 800 ms); each one failed over to the fast one instead.
    const answers = await Promise.all(Array.from({ length: 6 }, () => outcome(c.nap(0))));
    assert.deepEqual(answers, Array(6).fill("fast"), "every call answered by the fast provider");
  });

  it("retries: a configurator's retries replaces the client's, a method's own retries win over it", async () => {
    const a = new Slow("a");
    const b = new Slow("b");
    await provider(a);
    await provider(b);
    const { c, lines } = consumer({ retries: 2 });
    await waitFor(() => clientProviders(c).length === 2, 15_000, "both providers");
    const attempts = async () => {
      const before = a.calls + b.calls;
      await assert.rejects(c.fail());
      return a.calls + b.calls - before;
    };
    assert.equal(await attempts(), 3, "the client's 2 retries");
    await apply(lines, rule({ retries: 0 }));
    assert.equal(await attempts(), 1, "the configurator's 0 retries");
    await apply(lines, rule({ retries: 0, "fail.retries": 1 }));
    assert.equal(await attempts(), 2, "fail.retries 1");
    const own = consumer({ retries: 2, methods: { fail: { retries: 4 } } });
    await waitFor(() => clientProviders(own.c).length === 2 && own.lines.some((l) => l.includes(RULE)), 15_000, "the second consumer");
    const before = a.calls + b.calls;
    await assert.rejects(own.c.fail());
    assert.equal(a.calls + b.calls - before, 2, "fail.retries from the configurator wins over the method's own");
    await apply(own.lines, rule({ retries: 0 }));
    const before2 = a.calls + b.calls;
    await assert.rejects(own.c.fail());
    assert.equal(a.calls + b.calls - before2, 5, "the method's own 4 retries win over the configurator's retries");
  });

  it("loadbalance: a configurator names the balancer, over the client's own; deleting it restores the client's", async () => {
    await provider(new Slow("a"));
    await provider(new Slow("b"));
    const { c, lines } = consumer({ loadBalance: "random" });
    await waitFor(() => clientProviders(c).length === 2, 15_000, "both providers");
    const count = async (n: number) => {
      const out: Record<string, number> = {};
      for (let i = 0; i < n; i++) {
        const who = await c.whoami();
        out[who] = (out[who] ?? 0) + 1;
      }
      return Object.values(out).sort((x, y) => x - y);
    };
    await apply(lines, rule({ loadbalance: "roundrobin" }));
    assert.deepEqual(await count(20), [10, 10], "round robin: strictly alternating");
    await apply(lines, rule({ loadbalance: "consistenthash" }));
    assert.deepEqual(await count(20), [20], "consistent hash: one provider for the same arguments");
    await apply(lines, null);
    assert.equal((await count(40)).length, 2, "random again: both providers");
  });

  it("provider side: a bad timeout in a rule addressed to our provider is not registered (one log line naming the key); its weight is", async () => {
    const log = recordingLogger();
    const s = createServer({ services: [new Slow("p")], registry: { address: zk.address(4000), application: "tuning-provider" }, logger: log.logger });
    servers.push(s);
    await s.listen({ port: 0, host: "127.0.0.1" });
    const { c } = consumer();
    await waitFor(() => clientProviders(c).length === 1, 15_000, "the provider");
    const providerRule = rule({ timeout: 1_000_000_000_000, weight: 300 }).replace("side: consumer", "side: provider");
    await rules.write(RULE, providerRule);
    await waitFor(() => clientProviders(c)[0]?.weight === 300, 15_000, "weight 300 registered");
    const p = clientProviders(c)[0] as unknown as { url: { params: Record<string, string> } };
    assert.equal(p.url.params.timeout, undefined, "no timeout registered");
    assert.equal(log.lines.filter((l) => l.includes(RULE) && l.includes('timeout: "1000000000000"')).length, 1, log.lines.join("\n"));
  });
});
