import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clientProviders, closeClient, createClient, createServer, FailoverError } from "../../src/index.js";
import {
  decodeComponent,
  type DubboUrl,
  encodeComponent,
  matchesService,
  parseUrl,
  type ProvidersListener,
  type Registry,
  type ServiceKey,
  toFullString,
} from "../../src/registry.js";
import { ECHO_SERVICE, EchoService, waitFor } from "./services.js";

describe("registry: Dubbo's URL form", () => {
  it("toFullString sorts the parameters and leaves empty ones out; encodeComponent is Java's URLEncoder", () => {
    const url: DubboUrl = {
      protocol: "tri",
      host: "10.0.0.5",
      port: 50051,
      path: "org.example.Greet",
      params: { side: "provider", application: "a b", methods: "greet,greetStream", version: "", interface: "org.example.Greet" },
    };
    const full = toFullString(url);
    assert.equal(full, "tri://10.0.0.5:50051/org.example.Greet?application=a b&interface=org.example.Greet&methods=greet,greetStream&side=provider");
    assert.equal(
      encodeComponent(full),
      "tri%3A%2F%2F10.0.0.5%3A50051%2Forg.example.Greet%3Fapplication%3Da+b%26interface%3Dorg.example.Greet%26methods%3Dgreet%2CgreetStream%26side%3Dprovider",
    );
    // URLEncoder keeps . - * _ and escapes ! ' ( ) ~, unlike encodeURIComponent.
    assert.equal(encodeComponent("a.b-c*d_e!f'g(h)i~j é"), "a.b-c*d_e%21f%27g%28h%29i%7Ej+%C3%A9");
    assert.equal(decodeComponent(encodeComponent(full)), full);
    assert.equal(decodeComponent("a%ZZb+c%41"), "a%ZZb cA", "malformed escapes are kept");
  });

  it("parseUrl reads providers written by Java, Go and us, IPv6 included", () => {
    const java = parseUrl(
      "tri://10.224.1.29:50052/org.apache.dubbo.demo.DemoService?application=demo&deprecated=false&dubbo=2.0.2&interface=org.apache.dubbo.demo.DemoService&methods=sayHello&prefer.serialization=fastjson2,hessian2&release=3.3.0&side=provider&timestamp=1706775452118",
    );
    assert.equal(java.protocol, "tri");
    assert.equal(java.host, "10.224.1.29");
    assert.equal(java.port, 50052);
    assert.equal(java.path, "org.apache.dubbo.demo.DemoService");
    assert.equal(java.params["prefer.serialization"], "fastjson2,hessian2");
    const v6 = parseUrl("tri://[fe80::1]:7001/x.Y?anyhost");
    assert.deepEqual([v6.host, v6.port, v6.params.anyhost], ["fe80::1", 7001, "anyhost"]);
    assert.equal(toFullString({ ...v6, params: {} }), "tri://[fe80::1]:7001/x.Y");
    assert.equal(toFullString({ protocol: "consumer", host: "10.0.0.1", port: 0, path: "x.Y", params: { a: "1" } }), "consumer://10.0.0.1/x.Y?a=1");
    assert.throws(() => parseUrl("no scheme"), /not a URL/);
  });

  it("matchesService follows Dubbo's UrlUtils.isMatch: group, version, wildcards, lists, disabled providers", () => {
    const p = (params: Record<string, string>): DubboUrl => ({ protocol: "tri", host: "h", port: 1, path: "x.Y", params: { interface: "x.Y", ...params } });
    const key = (k: Partial<ServiceKey> = {}): ServiceKey => ({ interface: "x.Y", ...k });
    assert.ok(matchesService(key(), p({})));
    assert.ok(!matchesService(key(), p({ version: "1.0" })));
    assert.ok(matchesService(key({ version: "1.0" }), p({ version: "1.0" })));
    assert.ok(matchesService(key({ version: "*" }), p({ version: "2.0" })));
    assert.ok(matchesService(key({ group: "a,b" }), p({ group: "b" })));
    assert.ok(!matchesService(key({ group: "a" }), p({ group: "b" })));
    assert.ok(matchesService(key({ group: "*" }), p({ group: "b" })));
    assert.ok(!matchesService(key(), p({ enabled: "false" })));
    assert.ok(!matchesService(key(), p({ disabled: "true" })));
    assert.ok(!matchesService(key(), { ...p({}), protocol: "empty" }));
    assert.ok(!matchesService(key({ interface: "other.Z" }), p({})));
  });
});

/** A registry in memory: what a custom (etcd, Nacos …) registry implements. */
class MemoryRegistry implements Registry {
  readonly address = "memory://test";
  readonly urls = new Set<DubboUrl>();
  readonly listeners = new Map<ProvidersListener, ServiceKey>();
  closed = false;
  async register(url: DubboUrl): Promise<void> {
    this.urls.add(url);
    this.notify();
  }
  async unregister(url: DubboUrl): Promise<void> {
    this.urls.delete(url);
    this.notify();
  }
  subscribe(key: ServiceKey, listener: ProvidersListener): () => void {
    this.listeners.set(listener, key);
    queueMicrotask(() => this.notify());
    return () => this.listeners.delete(listener);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
  private notify(): void {
    for (const [l, key] of this.listeners) l([...this.urls].filter((u) => u.protocol === "tri" && matchesService(key, u)));
  }
}

describe("registry: the Registry interface and the client's options", () => {
  it("a custom Registry object serves a server and clients; neither closes it; emptyProtection: false lets the list empty", async () => {
    const registry = new MemoryRegistry();
    const s = createServer({ services: [new EchoService("mem")], registry: { address: registry, application: "mem-app" } });
    await s.listen({ port: 0 });
    const tri = [...registry.urls].filter((u) => u.protocol === "tri");
    assert.equal(tri.length, 1, "only the user's service is announced, not health or reflection");
    assert.equal(tri[0].path, ECHO_SERVICE);
    assert.equal(tri[0].params.application, "mem-app");
    const c = createClient(EchoService, { registry, retries: 1 });
    const strict = createClient(EchoService, { registry: { address: registry, emptyProtection: false, registerConsumer: false } });
    assert.equal(await c.whoami(), "mem");
    assert.equal(await strict.whoami(), "mem");
    assert.ok([...registry.urls].some((u) => u.protocol === "consumer" && u.params.category === "consumers"));
    await assert.rejects(c.fail(), (e: unknown) => e instanceof FailoverError && / from the registry memory:\/\/test on the consumer /.test(e.message));
    await s.close();
    await waitFor(() => clientProviders(strict).length === 0, 1000, "the list without empty protection to empty");
    assert.equal(clientProviders(c).length, 1, "the list with empty protection stays");
    await assert.rejects(strict.whoami(), /no provider available for the service org\.example\.registry\.EchoService in the registry memory:\/\/test/);
    await closeClient(strict);
    await closeClient(c);
    assert.equal(registry.urls.size, 0, "the server and the client removed their nodes");
    assert.equal(registry.closed, false);
  });

  it("a provider keeps its state across notifications, whatever form its host is written in (Java's long IPv6, upper case)", async () => {
    const registry = new MemoryRegistry();
    const forms = ["[0:0:0:0:0:0:0:1]", "Host.EXAMPLE"];
    for (const host of forms) {
      registry.urls.add(parseUrl(`tri://${host}:20880/${ECHO_SERVICE}?interface=${ECHO_SERVICE}&side=provider`));
    }
    const c = createClient(EchoService, { registry: { address: registry, registerConsumer: false } });
    await waitFor(() => clientProviders(c).length === 2, 1000, "both providers listed");
    const before = clientProviders(c);
    assert.deepEqual(before.map((p) => p.address).sort(), ["[::1]:20880", "host.example:20880"]);
    await registry.register(parseUrl(`tri://[0:0:0:0:0:0:0:1]:20880/${ECHO_SERVICE}?interface=${ECHO_SERVICE}&side=provider&dup=1`));
    const after = clientProviders(c);
    assert.equal(after.length, 2, "the same provider written twice is one provider");
    for (const p of before) assert.ok(after.includes(p), `${p.address} kept its Provider object`);
    await closeClient(c);
  });

  it("createClient wants providers or registry, not both, not neither", () => {
    assert.throws(
      () => createClient(EchoService, { providers: "127.0.0.1:1", registry: "zookeeper://127.0.0.1:1" }),
      /createClient: give either options\.providers or options\.registry, not both/,
    );
    assert.throws(() => createClient(EchoService, {}), /createClient: options\.providers is missing: .* or options\.registry/);
    assert.throws(() => createClient(EchoService, { registry: "etcd://127.0.0.1:2379" }), /unsupported registry "etcd:\/\/127\.0\.0\.1:2379"/);
    assert.throws(() => createServer({ registry: 42 as never }), /createServer: registry must be an address/);
  });
});
