// The seam between the server core and the wire protocols: what each protocol folder exports
// from its `server-handler.ts` and `src/server/protocols.ts` lists, one line each. The core
// never names a protocol: keep every wire rule (claims, error forms, cancellation) behind it.
import type { IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { RpcError } from "../protocol/rpc-error.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import type { CallContext } from "./context.js";
import type { Logger } from "./logger.js";
import type { RegisteredMethod } from "./router.js";
import type { ServerCore } from "./server-core.js";

/**
 * One wire protocol's server half, the server's counterpart of the client's `ProtocolClient`.
 * The core (`src/server/`) keeps what every protocol shares: registration, routing tables,
 * limits, CORS, auth, telemetry, the access log, shutdown. It asks the protocols, in the order
 * of `src/server/protocols.ts`, which one {@link ServerProtocolHandler.claims claims} an
 * exchange, and hands it to that one; it never asks which protocol it speaks.
 */
export interface ServerProtocol {
  /**
   * The protocol's name: `CallContext.protocol` of its calls, and what the access log, metrics
   * and spans show for its calls and refusals.
   */
  readonly name: string;
  /**
   * Sets the protocol up for one server (or one mounted handler). Undefined when the server's
   * options leave it off (MCP without `mcp`): it then claims nothing.
   */
  open(core: ServerCore, settings: ServerProtocolSettings): ServerProtocolHandler | undefined;
}

/** What a server gives its protocols when it opens them. */
export interface ServerProtocolSettings {
  /** The server's options as given (each protocol reads and checks its own: `mcp`, …). */
  readonly options: Readonly<Record<string, unknown>>;
  /** True when `cors` is configured (it has judged `Origin` before a protocol sees the request). */
  readonly corsOn: boolean;
  /** True when a browser page of `origin` may open calls here (the CORS origins, or same origin). */
  originAllowed(origin: string, host: string | undefined): boolean;
  /** A request side silent this long closes a WebSocket call; 0: never. */
  readonly webSocketIdleMs: number;
  /** Where the server logs. */
  readonly logger: Logger;
  /** The address the server is bound to (a mounted handler's: the local address of its first request); undefined before. */
  address(): AddressInfo | undefined;
}

/** What a protocol reads of a request to claim it: no body, nothing parsed beyond the headers. */
export interface ExchangeHead {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  /** The query string without `?`, if any. */
  readonly query: string | undefined;
  /** Request headers, lower-case names (empty when the request could not be parsed). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** One protocol set up for one server. */
export interface ServerProtocolHandler {
  /** {@link ServerProtocol.name}. */
  readonly name: string;
  /**
   * True when this protocol serves `ex`: checks of its method, path, query and headers (a
   * content type, a version header, a registered path) that allocate nothing. The first
   * protocol of the list that claims an exchange serves it; the last one claims everything.
   */
  claims(ex: ExchangeHead): boolean;
  /** Serves an exchange it claimed: checks, then the call, or a refusal in its own form. Never throws. */
  handle(ex: Exchange): void;
  /**
   * Answers a request the server will not serve with `err`, in this protocol's form (gRPC
   * status, Connect error JSON, the Triple HTTP error body …), before anything was read: the
   * core's refusals (a consumed body, a cancelled fetch) and the listener's (headers too large,
   * request timeout, bad request). `r` may carry no request line (an unparsable request).
   */
  writeError(r: Responder, err: RpcError): void;
  /**
   * Ends a call of this protocol that the server gives up on (shutdown past
   * `shutdownTimeoutMs`): its handler was told through `ctx` already; this ends the wire side
   * (a status, a reset stream, a close frame). Never throws.
   */
  cancel(ctx: CallContext, ex: Exchange, err: RpcError): void;
  /** An HTTP/1.1 `Upgrade` request (WebSocket): served, or refused with an HTTP error. Never throws. */
  upgrade?(req: IncomingMessage, socket: Socket, head: Buffer): void;
  /** True when requests for `path` are this protocol's beyond the registered RPC paths (the MCP endpoint). */
  serves?(path: string): boolean;
  /** A method was registered (MCP makes it a tool when it opted in). */
  add?(entry: RegisteredMethod): void;
  /** A service was unregistered. */
  remove?(service: ServiceDescriptor): void;
}
