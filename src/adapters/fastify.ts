// Owns `fastifyTriplePlugin`. A Fastify plugin serving triple-rpc services beside the app's own
// routes: a catch-all route (every HTTP method) serves the RPC paths, REST routes and OpenAPI pages
// … Must not change: the host framework's contract: a request that is not ours goes on untouched.
import type { NodeRequest, NodeResponse } from "./node-handler.js";
import { type HandlerOptions, mountedServer, nodeHandlerOf } from "./node-handler.js";

/** The part of a Fastify instance the plugin uses (Fastify itself is not loaded by triple-rpc). */
export interface FastifyInstanceLike {
  readonly prefix?: string;
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    contentType: string | RegExp,
    parser: (request: unknown, payload: unknown, done: (err: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: string[];
    url: string;
    handler: (request: { raw: NodeRequest }, reply: { raw: NodeResponse; hijack(): void; callNotFound(): void }) => void;
  }): unknown;
  addHook(name: "onClose", hook: (instance: unknown, done: () => void) => void): unknown;
}

/**
 * A Fastify plugin serving triple-rpc services beside the app's own routes: a catch-all route
 * (every HTTP method) serves the RPC paths, REST routes and OpenAPI pages triple-rpc has, and
 * hands any other path to the app's 404 handler; works over HTTP/1.1 and in Fastify's
 * `http2: true` mode (then gRPC too). Options are {@link HandlerOptions} (those of
 * `createServer` without the port's). Inside the plugin Fastify's body parsers are off, so the
 * bodies reach triple-rpc unread (Fastify's `bodyLimit` does not apply; `limits` does); a
 * registration `prefix` is honoured. The calls drain when Fastify closes.
 *
 * ```ts
 * const app = Fastify({ http2: true });
 * await app.register(fastifyTriplePlugin, { services: [new GreeterImpl()] });
 * ```
 */
export async function fastifyTriplePlugin(instance: FastifyInstanceLike, options: HandlerOptions): Promise<void> {
  // Fastify passes its own registration options (prefix, logLevel …) along with ours.
  const { prefix: _prefix, logLevel: _logLevel, ...rest } = options as HandlerOptions & { prefix?: string; logLevel?: string };
  const core = mountedServer(rest, "fastifyTriplePlugin");
  const prefix = instance.prefix ?? "";
  const handler = nodeHandlerOf(core, prefix);
  // Encapsulated to this plugin: the app's own routes keep their parsers.
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser(/^.*/, (_request, _payload, done) => done(null, undefined));
  // One catch-all route: Fastify matches the app's own routes first (static, then parametric,
  // then wildcard), and what triple-rpc does not serve goes to the app's 404 handler.
  instance.route({
    // Every method, so the others get the protocol's own 405 rather than a Fastify 404 (HEAD comes with GET).
    method: ["POST", "GET", "OPTIONS", "PUT", "DELETE", "PATCH"],
    url: "/*",
    handler: (request, reply) => {
      const url = (request.raw as { url?: string }).url ?? "/";
      const q = url.indexOf("?");
      let path = q < 0 ? url : url.slice(0, q);
      if (prefix && path.startsWith(prefix)) path = path.slice(prefix.length) || "/";
      if (!handler.serves(path.startsWith("/") ? path : `/${path}`)) {
        reply.callNotFound();
        return;
      }
      reply.hijack();
      handler(request.raw, reply.raw);
    },
  });
  instance.addHook("onClose", (_i, done) => {
    void core.close().then(done, done);
  });
}
