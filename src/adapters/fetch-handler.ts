// Owns `createFetchHandler`. A `(request: Request) => Promise<Response>` handler for runtimes built
// on the fetch API (Bun.serve, Deno.serve, Cloudflare-style workers, Next.js route handlers), with
// … Must not change: the host framework's contract: a request that is not ours goes on untouched.
import type { AddressInfo } from "node:net";
import { clientCancelled } from "../protocol/errors.js";
import { FetchExchange } from "./fetch-exchange.js";
import { type HandlerOptions, mountedServer } from "./node-handler.js";

/** Options of {@link createFetchHandler}: {@link HandlerOptions}, and where the handler is mounted. */
export interface FetchHandlerOptions extends HandlerOptions {
  /**
   * A path prefix the runtime routes to the handler (a Next.js `app/api/[...rpc]/route.ts` gets
   * `/api/<service>/<method>`): removed before routing. Default none.
   */
  prefix?: string;
  /** Answers requests for paths that are no registered method's. Default: the protocol's 404. */
  fallback?: (request: Request) => Response | Promise<Response>;
}

/** A fetch-API handler: one `Request` in, one `Response` out. */
export interface FetchHandler {
  (request: Request): Promise<Response>;
  /** Graceful shutdown of the calls in progress (health NOT_SERVING, new calls refused, in-flight ones drained). */
  close(): Promise<void>;
}

/**
 * A `(request: Request) => Promise<Response>` handler for runtimes built on the fetch API
 * (Bun.serve, Deno.serve, Cloudflare-style workers, Next.js route handlers), with what
 * `createServer` applies (limits, auth, CORS, interceptors, telemetry, errors). It serves what an
 * HTTP/1-style request and response carry: Triple HTTP (and its GET and SSE), Connect unary and
 * server streams (and GET), and gRPC-Web. gRPC itself needs HTTP/2 trailers: mount
 * {@link createHandler} in a node:http2 server for it.
 *
 * ```ts
 * const handler = createFetchHandler({ services: [new GreeterImpl()] });
 * Bun.serve({ fetch: handler });                 // Bun
 * export const POST = createFetchHandler({ services, prefix: "/api" }); // Next.js route
 * ```
 */
export function createFetchHandler(options: FetchHandlerOptions = {}): FetchHandler {
  const { prefix = "", fallback, ...rest } = options;
  const core = mountedServer(rest, "createFetchHandler");
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    let path = url.pathname;
    if (prefix && path.startsWith(prefix)) path = path.slice(prefix.length) || "/";
    if (!path.startsWith("/")) path = `/${path}`;
    if (fallback && !core.serves(path)) return fallback(request);
    if (core.mountedAddress === undefined) {
      const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      core.mountedAddress = { address: url.hostname, port, family: "IPv4" } as AddressInfo;
    }
    // A request whose signal aborts gets the protocol's `cancelled` answer (the call was told first).
    const ex = new FetchExchange(request, path, (aborted) => core.writeError(aborted, clientCancelled()));
    core.dispatch(ex);
    return ex.response;
  };
  return Object.assign(handler, { close: () => core.close() });
}
