import * as assert from "node:assert/strict";
import { after, afterEach, before, describe, it } from "node:test";
import {
  type CallContext,
  clientProviders,
  closeClient,
  createClient,
  createServer,
  Ctx,
  explainRoute,
  Method,
  Param,
  Service,
  type TripleServer,
} from "../../src/index.js";
import { localAddress } from "../../src/transport/local-address.js";
import { kazoo, kazooMissing, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";
import { RuleWriter } from "./rule-writer.js";
import { ECHO_SERVICE, EchoService, recordingLogger, waitFor } from "./services.js";
import type { ConsumerExtra, ProviderExtra } from "../helpers/registry-options.js";

const skip = zookeeperMissing() ?? kazooMissing();

/** A service that answers the routing tag its call carried. */
@Service("org.example.governance.TagEcho")
class TagEcho {
  @Method()
  async tagOf(@Ctx() ctx: CallContext): Promise<string> {
    return ctx.tag ? `${ctx.tag.tag}${ctx.tag.force === undefined ? "" : `/force=${ctx.tag.force}`}` : "-";
  }
}

/** A service whose handler calls TagEcho: the tag of its own call is carried on. */
@Service("org.example.governance.Relay")
class Relay {
  constructor(private readonly next: { tagOf(): Promise<string> }) {}

  @Method()
  async relay(@Param("x") _x: string): Promise<string> {
    return this.next.tagOf();
  }
}

/** A configurator rule as Dubbo Admin writes it (service scope). */
function serviceConfigurator(
  side: "consumer" | "provider",
  addresses: readonly string[],
  parameters: Record<string, unknown>,
  providerAddresses?: readonly string[],
): string {
  return [
    "configVersion: v3.0",
    "scope: service",
    `key: ${ECHO_SERVICE}`,
    "enabled: true",
    "configs:",
    `  - side: ${side}`,
    `    addresses: ${JSON.stringify(addresses)}`,
    ...(providerAddresses ? [`    providerAddresses: ${JSON.stringify(providerAddresses)}`] : []),
    `    parameters: ${JSON.stringify(parameters)}`,
  ].join("\n");
}

describe("governance: rules from the config center (ZooKeeper /dubbo/config)", { skip }, () => {
  let zk: ZooKeeperServer;
  let rules: RuleWriter;
  const servers: TripleServer[] = [];
  const clients: object[] = [];
  const SERVICE_RULE = `${ECHO_SERVICE}::.configurators`;

  async function provider(id: string, extra: ProviderExtra = {}, at = { host: "127.0.0.1" }): Promise<TripleServer> {
    const s = createServer({
      services: [new EchoService(id)],
      ...extra,
      registry: { address: zk.address(4000), application: "gov-provider", ...extra.registry },
    });
    servers.push(s);
    await s.listen({ port: 0, host: at.host });
    return s;
  }

  function consumer(extra: ConsumerExtra = {}) {
    const c = createClient(EchoService, { ...extra, registry: { address: zk.address(4000), application: "gov-consumer", ...extra.registry } });
    clients.push(c);
    return c;
  }

  async function countCalls(c: ReturnType<typeof consumer>, n: number): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const who = await c.whoami();
      out[who] = (out[who] ?? 0) + 1;
    }
    return out;
  }

  before(async () => {
    zk = await ZooKeeperServer.start();
    rules = await RuleWriter.connect(zk.hostPort);
  });
  // Every test's providers and clients go with it, passed or failed: the next test counts providers afresh.
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => closeClient(c)));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  after(async () => {
    rules?.close();
    await zk?.destroy();
  });

  it("a consumer-side configurator (disabled, then weight) moves our consumer's calls on its next calls; deleting it restores them", async () => {
    const a = await provider("cfg-a");
    const b = await provider("cfg-b");
    const c = consumer({ loadBalance: "random", registry: { level: "interface" } });
    await waitFor(() => clientProviders(c).length === 2, 15_000, "both providers");
    const aAddr = `127.0.0.1:${a.address.port}`;
    let t0 = Date.now();
    await rules.write(SERVICE_RULE, serviceConfigurator("consumer", ["0.0.0.0"], { disabled: true }, [aAddr]));
    await waitFor(() => clientProviders(c).length === 1, 15_000, "provider a disabled");
    const disableMs = Date.now() - t0;
    assert.ok(disableMs < 5000, `took ${disableMs} ms`);
    assert.deepEqual(await countCalls(c, 30), { "cfg-b": 30 });
    t0 = Date.now();
    await rules.write(SERVICE_RULE, serviceConfigurator("consumer", ["0.0.0.0"], { weight: 900 }, [aAddr]));
    await waitFor(() => clientProviders(c).some((p) => p.port === a.address.port && p.weight === 900), 15_000, "provider a back, weight 900");
    assert.equal(clientProviders(c).find((p) => p.port === b.address.port)?.weight, 100, "the rule names a only");
    t0 = Date.now();
    await rules.delete(SERVICE_RULE);
    await waitFor(() => clientProviders(c).every((p) => p.weight === 100) && clientProviders(c).length === 2, 15_000, "rule deleted");
    assert.ok(Date.now() - t0 < 5000);
    await Promise.all([a.close(), b.close()]);
  });

  it("a configurator that does not parse keeps the previous one, with one log line naming the key and the error", async () => {
    const a = await provider("bad-a");
    const { lines, logger } = recordingLogger();
    const c = consumer({ logger, registry: { level: "interface" } });
    await waitFor(() => clientProviders(c).length === 1, 15_000, "the provider");
    await rules.write(SERVICE_RULE, serviceConfigurator("consumer", ["0.0.0.0"], { weight: 700 }));
    await waitFor(() => clientProviders(c)[0]?.weight === 700, 15_000, "weight 700");
    await rules.write(SERVICE_RULE, "configVersion: v3.0\nscope: service\nkey: [unclosed");
    await rules.write(SERVICE_RULE, "configVersion: v3.0\nscope: nowhere\nkey: x\nconfigs: []");
    await waitFor(() => lines.filter((l) => l.includes("is refused")).length >= 1, 15_000, "a refusal logged");
    await new Promise((r) => setTimeout(r, 300));
    const refused = lines.filter((l) => l.includes(SERVICE_RULE) && l.includes("is refused"));
    assert.ok(refused.length >= 1 && refused.length <= 2, refused.join("\n"));
    assert.match(refused.at(-1)!, /scope must be "service" or "application"|not YAML/);
    assert.equal(clientProviders(c)[0]?.weight, 700, "the previous rule stays");
    assert.equal(await c.whoami(), "bad-a");
    await rules.delete(SERVICE_RULE);
    await waitFor(() => clientProviders(c)[0]?.weight === 100, 15_000, "rule deleted");
    await a.close();
  });

  it("a provider-side rule addressed to our provider: weight re-registers its URL; disabled removes it at both levels until the rule goes", async () => {
    const a = await provider("prov-a", { registry: { application: "gov-prov-app" } });
    const b = await provider("prov-b", { registry: { application: "gov-prov-app" } });
    const aAddr = `127.0.0.1:${a.address.port}`;
    const iface = consumer({ registry: { level: "interface" } });
    const inst = consumer({ registry: { level: "application", providedBy: "gov-prov-app", registerConsumer: false } });
    await waitFor(() => clientProviders(iface).length === 2 && clientProviders(inst).length === 2, 15_000, "both providers at both levels");
    // Java matches a provider-side item's addresses by host only (both providers share 127.0.0.1):
    // providerAddresses names the one provider.
    const appRule = (params: Record<string, unknown>) =>
      [
        "configVersion: v3.0",
        "scope: application",
        "key: gov-prov-app",
        "configs:",
        "  - side: provider",
        '    addresses: ["127.0.0.1"]',
        `    providerAddresses: ["${aAddr}"]`,
        `    parameters: ${JSON.stringify(params)}`,
      ].join("\n");
    await rules.write("gov-prov-app.configurators", appRule({ weight: 300 }));
    await waitFor(() => clientProviders(iface).some((p) => p.port === a.address.port && p.weight === 300), 15_000, "weight 300 re-registered");
    const nodes = (await kazoo(zk.hostPort, [{ op: "children", path: `/dubbo/${ECHO_SERVICE}/providers` }]))[0] as string[];
    const mine = nodes.map(decodeURIComponent).filter((n) => n.includes(`:${a.address.port}/`));
    assert.equal(mine.length, 1, "the old URL was unregistered");
    assert.match(mine[0], /weight=300/);
    await rules.write("gov-prov-app.configurators", appRule({ disabled: true }));
    await waitFor(() => clientProviders(iface).length === 1, 15_000, "a gone at interface level");
    await waitFor(() => clientProviders(inst).length === 1, 15_000, "a gone at instance level");
    const [ifaceNodes, instNodes] = (await kazoo(zk.hostPort, [
      { op: "children", path: `/dubbo/${ECHO_SERVICE}/providers` },
      { op: "children", path: "/services/gov-prov-app" },
    ])) as string[][];
    assert.equal(ifaceNodes.filter((n) => decodeURIComponent(n).includes(`:${a.address.port}/`)).length, 0);
    assert.deepEqual(instNodes, [`127.0.0.1:${b.address.port}`]);
    assert.deepEqual(await countCalls(iface, 10), { "prov-b": 10 });
    assert.deepEqual(await countCalls(inst, 10), { "prov-b": 10 });
    await rules.delete("gov-prov-app.configurators");
    await waitFor(() => clientProviders(iface).length === 2 && clientProviders(inst).length === 2, 15_000, "a back at both levels");
    await Promise.all([a.close(), b.close()]);
  });

  it("routing from the config center: static tags (registryTag), a dynamic tag rule, a condition rule, each taking effect on the next calls and undone by deleting it; explainRoute and the unavailable error say why", async () => {
    // On the LAN address: as in Java, a tag rule's address never matches a loopback provider.
    const lan = { host: localAddress() };
    const gray = await provider("r-gray", { registry: { application: "route-app", tag: "gray" } }, lan);
    const p2 = await provider("r-2", { registry: { application: "route-app" } }, lan);
    const p3 = await provider("r-3", { registry: { application: "route-app" } }, lan);
    const c = consumer({ loadBalance: "roundrobin", registry: { level: "interface", application: "route-consumer" } });
    await waitFor(() => clientProviders(c).length === 3, 15_000, "three providers");
    const who = async (n: number, opts?: { tag?: string; forceTag?: boolean }) => {
      const out = new Set<string>();
      for (let i = 0; i < n; i++) out.add(await c.whoami(opts ?? {}));
      return [...out].sort();
    };
    assert.deepEqual(await who(30), ["r-2", "r-3"], "untagged calls avoid tagged providers");
    assert.deepEqual(await who(10, { tag: "gray" }), ["r-gray"]);
    assert.deepEqual(await who(30, { tag: "blue" }), ["r-2", "r-3"], "an unknown tag falls back to untagged providers");
    await assert.rejects(
      c.whoami({ tag: "blue", forceTag: true }),
      (e: Error) => /unavailable|no provider available/i.test(e.message) && /routing rules kept none/.test(e.message),
    );
    const tagged = consumer({ tag: "gray", registry: { level: "interface", application: "route-consumer", registerConsumer: false } });
    await waitFor(() => clientProviders(tagged).length === 3, 15_000, "three providers");
    assert.equal(await tagged.whoami(), "r-gray", "the client's tag");

    const p3Addr = `${lan.host}:${p3.address.port}`;
    let t0 = Date.now();
    await rules.write(
      "route-app.tag-router",
      `configVersion: v3.0\nforce: false\nenabled: true\nkey: route-app\ntags:\n  - name: blue\n    addresses: ["${p3Addr}"]\n`,
    );
    await waitFor(() => explainRoute(c, "whoami", [], { tag: "blue" }).kept.length === 1, 15_000, "the tag rule");
    const tagMs = Date.now() - t0;
    assert.deepEqual(await who(10, { tag: "blue" }), ["r-3"]);
    assert.deepEqual(await who(30), ["r-2"], "untagged calls avoid the rule's addresses too");
    await rules.delete("route-app.tag-router");
    await waitFor(() => explainRoute(c, "whoami", [], { tag: "blue" }).kept.length === 2, 15_000, "the tag rule deleted");

    t0 = Date.now();
    const condKey = `${ECHO_SERVICE}::.condition-router`;
    await rules.write(
      condKey,
      `configVersion: v3.0\nscope: service\nforce: true\nkey: ${ECHO_SERVICE}\nconditions:\n  - method=whoami => port=${p2.address.port}\n`,
    );
    await waitFor(() => explainRoute(c, "whoami", []).kept.length === 1, 15_000, "the condition rule");
    const condMs = Date.now() - t0;
    assert.deepEqual(await who(20), ["r-2"]);
    const sayHello = new Set<string>();
    for (let i = 0; i < 30; i++) sayHello.add((await c.sayHello("x")).split(" from ")[1]);
    assert.deepEqual([...sayHello].sort(), ["r-2", "r-3"], "other methods are not matched by the rule");
    const ex = explainRoute(c, "whoami", []);
    assert.match(ex.text, /condition-router/);
    assert.ok(ex.steps.length >= 3, ex.text);
    await rules.write(condKey, `configVersion: v3.0\nscope: service\nforce: true\nkey: ${ECHO_SERVICE}\nconditions:\n  - method=whoami => false\n`);
    await waitFor(() => explainRoute(c, "whoami", []).kept.length === 0, 15_000, "the blocklist rule");
    await assert.rejects(c.whoami(), (e: Error) => /routing rules kept none of the 3 providers/.test(e.message));
    await rules.delete(condKey);
    await waitFor(() => explainRoute(c, "whoami", []).kept.length === 2, 15_000, "the condition rule deleted");
    assert.deepEqual(await who(30), ["r-2", "r-3"]);
    assert.ok(tagMs < 5000 && condMs < 5000, `tag rule ${tagMs} ms, condition rule ${condMs} ms`);
    await Promise.all([gray.close(), p2.close(), p3.close()]);
  });

  it("Dubbo 2.6 rule nodes: override:// under /dubbo/<interface>/configurators apply as they come and go; route:// under routers/ are logged once each, not applied", async () => {
    const a = await provider("legacy-a");
    const route = (rule: string) => encodeURIComponent(`route://0.0.0.0/${ECHO_SERVICE}?category=routers&dynamic=false&rule=${encodeURIComponent(rule)}`);
    await kazoo(zk.hostPort, [{ op: "create", path: `/dubbo/${ECHO_SERVICE}/routers/${route("=> host != 127.0.0.1")}`, data: "" }]);
    const { lines, logger } = recordingLogger();
    const c = consumer({ logger, registry: { level: "interface" } });
    const routerLines = () => lines.filter((l) => l.includes("Dubbo 2.6 router node"));
    await waitFor(() => routerLines().length === 1, 15_000, "the legacy router line");
    assert.match(routerLines()[0], /1 new Dubbo 2.6 router node\(s\) under routers\/ .*host != 127\.0\.0\.1.*not applied/);
    assert.equal(await c.whoami(), "legacy-a", "the 2.6 route (host != 127.0.0.1) does not apply");
    // A router node written later: one more line, for it alone.
    await kazoo(zk.hostPort, [{ op: "create", path: `/dubbo/${ECHO_SERVICE}/routers/${route("method=fail => false")}`, data: "" }]);
    await waitFor(() => routerLines().length === 2, 15_000, "the second router's line");
    assert.match(routerLines()[1], /1 new .*method=fail => false/);
    // A 2.6 override (provider host:port, no side: Java's deprecated matching) reweighs provider a; deleting it restores the weight.
    const override = encodeURIComponent(`override://127.0.0.1:${a.address.port}/${ECHO_SERVICE}?category=configurators&dynamic=false&weight=900`);
    await kazoo(zk.hostPort, [{ op: "create", path: `/dubbo/${ECHO_SERVICE}/configurators/${override}`, data: "" }]);
    await waitFor(() => clientProviders(c)[0]?.weight === 900, 15_000, "the 2.6 override applied");
    await kazoo(zk.hostPort, [{ op: "delete", path: `/dubbo/${ECHO_SERVICE}/configurators/${override}` }]);
    await waitFor(() => clientProviders(c)[0]?.weight === 100, 15_000, "the 2.6 override gone");
    assert.equal(routerLines().length, 2, "no line again for routers already logged");
    await kazoo(zk.hostPort, [{ op: "delete", path: `/dubbo/${ECHO_SERVICE}/routers` }]);
    await a.close();
  });

  it("a migration rule switches our consumer between interface and instance discovery at run time", async () => {
    const a = await provider("mig-iface", { registry: { application: "mig-a", level: "interface" } });
    const b = await provider("mig-inst", { registry: { application: "mig-b", level: "application" } });
    const c = consumer({ registry: { application: "mig-consumer", providedBy: "mig-b" } });
    await waitFor(() => clientProviders(c).length === 2, 15_000, "both layouts merged (auto)");
    const rule = (step: string) => `key: mig-consumer\nstep: ${step}\n`;
    await rules.write("mig-consumer.migration", rule("FORCE_INTERFACE"), "DUBBO_SERVICEDISCOVERY_MIGRATION");
    await waitFor(() => clientProviders(c).length === 1 && clientProviders(c)[0].port === a.address.port, 15_000, "interface level only");
    assert.deepEqual(await countCalls(c, 10), { "mig-iface": 10 });
    await rules.write("mig-consumer.migration", rule("FORCE_APPLICATION"), "DUBBO_SERVICEDISCOVERY_MIGRATION");
    await waitFor(() => clientProviders(c).length === 1 && clientProviders(c)[0].port === b.address.port, 15_000, "instance level only");
    assert.deepEqual(await countCalls(c, 10), { "mig-inst": 10 });
    await rules.delete("mig-consumer.migration", "DUBBO_SERVICEDISCOVERY_MIGRATION");
    await waitFor(() => clientProviders(c).length === 2, 15_000, "back to auto");
    await Promise.all([a.close(), b.close()]);
  });

  it("dubbo.tag: a call's tag (option or attachment) is sent, and carried from an incoming call to the calls its handler makes", async () => {
    const echo = createServer({ services: [new TagEcho()] });
    servers.push(echo);
    await echo.listen({ port: 0, host: "127.0.0.1" });
    const echoClient = createClient(TagEcho, { providers: [`127.0.0.1:${echo.address.port}`] });
    clients.push(echoClient);
    const relay = createServer({ services: [new Relay(echoClient)] });
    servers.push(relay);
    await relay.listen({ port: 0, host: "127.0.0.1" });
    for (const protocol of ["triple", "grpc"] as const) {
      const c = createClient(Relay, { providers: [`127.0.0.1:${relay.address.port}`], protocol });
      clients.push(c);
      assert.equal(await c.relay("x"), "-", protocol);
      assert.equal(await c.relay("x", { tag: "gray" }), "gray", protocol);
      assert.equal(await c.relay("x", { tag: "gray", forceTag: true }), "gray/force=true", protocol);
      assert.equal(await c.relay("x", { metadata: { "dubbo.tag": "blue" } }), "blue", protocol);
      const tagged = createClient(Relay, { providers: [`127.0.0.1:${relay.address.port}`], protocol, tag: "canary" });
      clients.push(tagged);
      assert.equal(await tagged.relay("x"), "canary", protocol);
      assert.equal(await tagged.relay("x", { tag: "gray" }), "gray", `${protocol}: the call's tag wins`);
    }
    assert.equal(await echoClient.tagOf(), "-", "a call outside any handler carries no tag");
    assert.throws(() => createClient(Relay, { providers: ["127.0.0.1:1"], tag: "" }), /createClient: tag must be a non-empty string/);
    assert.throws(() => createClient(Relay, { providers: ["127.0.0.1:1"], forceTag: true }), /forceTag needs a tag/);
  });

  it("registryTag writes dubbo.tag in the provider URL; explainRoute answers for a call; configCenter is validated", async () => {
    const a = await provider("tagged", { registry: { application: "tag-app", tag: "gray" } });
    const c = consumer({ registry: { level: "interface" } });
    await waitFor(() => clientProviders(c).length === 1, 15_000, "the provider");
    const nodes = (await kazoo(zk.hostPort, [{ op: "children", path: `/dubbo/${ECHO_SERVICE}/providers` }]))[0] as string[];
    assert.ok(
      nodes.map(decodeURIComponent).some((n) => n.includes(`:${a.address.port}/`) && n.includes("dubbo.tag=gray")),
      nodes.join("\n"),
    );
    const ex = explainRoute(c, "whoami", [], { tag: "gray" });
    assert.equal(typeof ex.text, "string");
    assert.ok(Array.isArray(ex.steps));
    assert.throws(
      () => createClient(EchoService, { registry: { address: zk.address(), configCenter: "http://x" as string } }),
      /createClient: registry\.configCenter must be false, an address/,
    );
    assert.throws(
      () => createServer({ services: [new EchoService()], registry: { address: zk.address(), tag: "a b" } }),
      /createServer: registry\.tag must be a non-empty word/,
    );
    await a.close();
  });
});
