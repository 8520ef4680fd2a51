import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createFetchHandler } from "../../src/adapters/fetch-handler.js";
import { fastifyTriplePlugin } from "../../src/adapters/fastify.js";
import { createHandler, createTestClient, expressTripleMiddleware, type HandlerOptions, type TestClientOptions } from "../../src/index.js";
import type { ListenerOptionKey, RegistryOptionKey } from "../../src/server/server.js";

/**
 * The options of the server that owns the port (its HTTP stack, its registry announcements) are
 * absent from a mounted handler's options (a compile error, checked by `npm run typecheck`) and a
 * TypeError naming the option when passed from JavaScript: every one of them, on every adapter.
 * A `Record` over the exported key type: a key added to or renamed in the list fails to compile here.
 */
const LISTENER_VALUES: Record<ListenerOptionKey, unknown> = {
  tls: {},
  maxConcurrentStreams: 10,
  idleTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  requestTimeoutMs: 1000,
  bodyIdleTimeoutMs: 1000,
  minBodyBytesPerSecond: 100,
  bodyRateWindowMs: 1000,
  maxConnections: 10,
  maxConnectionsPerPeer: 10,
  http2SessionMemoryMb: 10,
  registry: "zookeeper://127.0.0.1:1",
};
const REGISTRY_KEYS: readonly RegistryOptionKey[] = ["registry"];

/** A Fastify instance that records nothing: the plugin refuses its options before touching it. */
const fastifyLike = {
  removeAllContentTypeParsers() {},
  addContentTypeParser() {},
  route() {},
  addHook() {},
};

const mounts: [string, (options: object) => unknown][] = [
  ["createHandler", (o) => createHandler(o as HandlerOptions)],
  ["expressTripleMiddleware", (o) => expressTripleMiddleware(o as HandlerOptions)],
  ["createFetchHandler", (o) => createFetchHandler(o as HandlerOptions)],
];

describe("mounted handlers refuse the options of the server that owns the port", () => {
  for (const [who, mount] of mounts) {
    it(`${who}: every listener option is a TypeError naming it`, () => {
      for (const [key, value] of Object.entries(LISTENER_VALUES)) {
        const re = new RegExp(`^${who}: ${key} (is a setting of the server that owns the port|needs a server that owns its port)`);
        assert.throws(
          () => mount({ services: [new GreetServiceImpl()], [key]: value }),
          (e: unknown) => e instanceof TypeError && re.test(e.message),
          key,
        );
      }
      // The header-size limit sits in `limits` but is the port's HTTP stack's.
      const re = new RegExp(`^${who}: limits.maxHeaderBytes is a setting of the server that owns the port`);
      assert.throws(
        () => mount({ services: [new GreetServiceImpl()], limits: { maxHeaderBytes: 1024 } }),
        (e: unknown) => e instanceof TypeError && re.test(e.message),
      );
    });
  }

  it("fastifyTriplePlugin: every listener option is a TypeError naming it", async () => {
    for (const [key, value] of Object.entries(LISTENER_VALUES)) {
      const re = new RegExp(`^fastifyTriplePlugin: ${key} `);
      await assert.rejects(
        fastifyTriplePlugin(fastifyLike, { [key]: value } as HandlerOptions),
        (e: unknown) => e instanceof TypeError && re.test(e.message),
        key,
      );
    }
  });

  it("createTestClient: the registry's options are refused, the port's HTTP stack options are taken", () => {
    for (const key of REGISTRY_KEYS) {
      const re = new RegExp(`^createTestClient: ${key} needs a server that owns its port`);
      const options = { services: [new GreetServiceImpl()], [key]: LISTENER_VALUES[key] } as TestClientOptions;
      assert.throws(
        () => createTestClient(GreetServiceImpl, options),
        (e: unknown) => e instanceof TypeError && re.test(e.message),
        key,
      );
    }
    assert.ok(createTestClient(GreetServiceImpl, { services: [new GreetServiceImpl()], limits: { maxHeaderBytes: 8192 }, idleTimeoutMs: 1000 }));
  });
});

// Type level: the port's options are not in a mount's option types (tsc fails on an unused @ts-expect-error).
export function typeLevel(): void {
  // @ts-expect-error tls belongs to the server that owns the port
  createHandler({ tls: {} });
  // @ts-expect-error idleTimeoutMs belongs to the server that owns the port
  expressTripleMiddleware({ idleTimeoutMs: 1 });
  // @ts-expect-error maxConnections belongs to the server that owns the port
  createFetchHandler({ maxConnections: 1 });
  // @ts-expect-error registry announcements need the port
  createFetchHandler({ registry: "zookeeper://x" });
  // @ts-expect-error the registry group (and its configCenter) needs the port
  createHandler({ registry: { address: "zookeeper://x", configCenter: false } });
  // @ts-expect-error bodyRateWindowMs belongs to the server that owns the port
  void fastifyTriplePlugin(fastifyLike, { bodyRateWindowMs: 1 });
  // @ts-expect-error the test client has no registry
  createTestClient(GreetServiceImpl, { services: [], registry: "zookeeper://x" });
  // The core's own options are taken everywhere.
  createHandler({ limits: { maxBodyBytes: 1 }, shutdownTimeoutMs: 1, drainDelayMs: 0 });
  createTestClient(GreetServiceImpl, { services: [], limits: { maxHeaderBytes: 1 }, tls: undefined });
}
