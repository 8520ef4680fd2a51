// Owns `createTestClient`. A client of `service` wired to an in-process server of
// `options.services`, without a socket: the client's HTTP/2 (or HTTP/1.1) connection is a pair of
// in-memory streams … Must not change: the host framework's contract: a request that is not ours
// goes on untouched.
import { type Client, createClient } from "../client/create-client.js";
import type { ClientOptions } from "../client/options.js";
import { type RegistryOptionKey, refuseListenerOptions, type ServerOptions, TripleServer } from "../server/server.js";
import { registerMemoryEndpoint } from "../transport/memory.js";

/** Options of {@link createTestClient}: the server's (as `createServer` takes them, without the registry's), and the client's. */
export interface TestClientOptions extends Omit<ServerOptions, RegistryOptionKey> {
  /**
   * The client's options (protocol, contentType, httpVersion, token, metadata, timeout,
   * interceptors …). `providers` is set by createTestClient; `retries` defaults to 0, so a test
   * sees the first failure.
   */
  client?: Omit<ClientOptions, "providers" | "registry">;
}

/** Removes a test server's endpoint once its client is garbage: nothing else refers to it. */
const endpoints = new FinalizationRegistry<() => void>((remove) => remove());

/**
 * A client of `service` wired to an in-process server of `options.services`, without a socket:
 * the client's HTTP/2 (or HTTP/1.1) connection is a pair of in-memory streams into the server's
 * own HTTP stack, so every call runs the whole pipeline a networked one does (protocol, binding,
 * validation, limits, auth, interceptors, errors, streams), with no port to listen on or
 * collide with; a call takes about what one over loopback does. `closeClient(client)` ends its
 * connection.
 *
 * ```ts
 * const client = createTestClient(GreeterImpl, { services: [new GreeterImpl()] });
 * assert.equal(await client.greet("ada"), "hello, ada");
 * await closeClient(client);
 * ```
 *
 * The constructor's parameters do not matter (as in `createClient`), hence `any[]`.
 */
export function createTestClient<S>(service: abstract new (...args: any[]) => S, options: TestClientOptions): Client<S> {
  const { client: clientOptions, ...serverOptions } = options;
  // The listener's HTTP stack without a port: a call runs what a networked one runs; nothing to announce.
  refuseListenerOptions(serverOptions, "createTestClient", ["registry"]);
  const server = new TripleServer(serverOptions);
  const endpoint = registerMemoryEndpoint((connection, httpVersion) => server.acceptConnection(connection, httpVersion));
  const client = createClient(service, { retries: 0, ...clientOptions, providers: [`memory://${endpoint.name}`] });
  endpoints.register(client as object, endpoint.remove);
  return client;
}
