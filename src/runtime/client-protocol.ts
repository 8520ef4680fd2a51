// Owns `MethodHeaders`, `jsonOrProto`, `refuseSerialization`. The headers of one method's attempts:
// the prepared ones (complete, as the transport sends them) when a call adds nothing of its own,
// else the call's headers with the … Must not change: the rules every protocol relies on
// (docs/architecture.md).
import type { OutgoingHttpHeaders } from "node:http";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { CallScope } from "../transport/client/call-scope.js";
import type { Http2Transport } from "../transport/client/http2.js";
import type { Provider } from "../transport/client/provider.js";
import type { UnaryTransport } from "../transport/client/unary-transport.js";
import type { CallOptions } from "./call-options.js";
import type { Attempt } from "./invocation.js";

/**
 * The seam between the client core and the wire protocols, the client's counterpart of the
 * server's per-protocol handlers. The core (`src/client/`) keeps what every protocol shares:
 * options, the call's scope and deadline, per-call metadata and tokens, interceptors, the
 * cluster and its failover, telemetry. Each protocol folder implements {@link ProtocolClient}
 * in its `client.ts`: the content types it speaks, its headers, codec and framing, how a
 * unary call is sent and its reply read, how a stream is opened. The core never asks which
 * protocol it speaks; `src/client/protocols.ts` lists them (one line each).
 */
export interface ProtocolClient {
  /** The value of the client's `protocol` option that selects it. */
  readonly name: string;
  /**
   * True when a client that names no protocol but gives these options (its `contentType`, its
   * `serialization`) speaks this protocol; the first protocol in the list that claims it wins.
   */
  claims(options: WireOptions): boolean;
  /**
   * Checks a client's options against this protocol and returns the content type its calls
   * use (the option, or the protocol's default). Throws a TypeError naming the fix.
   */
  contentType(options: WireOptions): string;
  /** Sets the protocol up for one client: checks its compression, prepares constant headers. */
  open(settings: WireSettings): ProtocolSession;
}

/** The client options a protocol checks. */
export interface WireOptions {
  readonly protocol: string | undefined;
  readonly contentType: string | undefined;
  readonly httpVersion: "1.1" | "2" | undefined;
  readonly compression: string | undefined;
  readonly serialization: string | undefined;
}

/** What a client gives its protocol: its checked options and its connections. */
export interface WireSettings extends WireOptions {
  /** The content type {@link ProtocolClient.contentType} returned. */
  readonly contentType: string;
  /** The largest response message (or unary body) accepted, in bytes. */
  readonly maxBytes: number;
  /** The transport of unary exchanges: HTTP/1.1 or HTTP/2, as `httpVersion` says. */
  unary(): UnaryTransport;
  /** The HTTP/2 transport (streams; every gRPC call). */
  http2(): Http2Transport;
  /** The client's `tls` options, for a connection of a call's own to an `https://` provider. */
  readonly tls: import("node:tls").ConnectionOptions | undefined;
  /** How a WebSocket call ends its request side (`websocket.endOfRequest`, checked). */
  readonly websocketEnd: "message" | "close";
}

/** One protocol set up for one client. */
export interface ProtocolSession {
  /**
   * Prepares a method once per client: its codec, framing and the headers every call repeats.
   * `headers` are the protocol-neutral ones (user agent, credentials, metadata, version, group).
   */
  prepare(md: MethodDescriptor, headers: OutgoingHttpHeaders): WireMethod;
}

/** A method prepared for one protocol. */
export interface WireMethod {
  /** The protocol its calls go out in (a Triple client's streams are gRPC), for telemetry. */
  readonly protocol: string;
  /** The headers every call repeats; a call with its own metadata starts from a copy. */
  readonly headers: OutgoingHttpHeaders;
  /**
   * The attempt of a unary call, run once per provider the cluster tries: the arguments are
   * encoded once, here; `headers` are {@link headers} or the call's own copy.
   */
  unary(args: readonly unknown[], headers: OutgoingHttpHeaders, scope: CallScope, options: CallOptions | undefined): Attempt<unknown>;
  /**
   * Opens a streaming call on a provider. Server streaming sends its one request message with
   * {@link StreamCall.sendArgs}; the others send with {@link StreamCall.send}.
   */
  open(provider: Provider, headers: OutgoingHttpHeaders, scope: CallScope, options: CallOptions | undefined, mode: ResponseMode): Promise<StreamCall>;
  /** Encodes the arguments of a server-streaming call as its one request message. */
  encodeArgs(args: readonly unknown[]): Uint8Array;
}

/** How a call's responses reach the caller: one message (unary, client streaming) or a stream. */
export type ResponseMode = "single" | "stream";

/** One open streaming call on the client. */
export interface StreamCall {
  /** The response messages of a `stream` mode call (undefined in `single` mode). */
  readonly responses: (AsyncIterator<unknown> & AsyncIterable<unknown>) | undefined;
  /** The one response of a `single` mode call. */
  result(): Promise<unknown>;
  /** Sends the one request message and ends the request side. */
  sendArgs(payload: Uint8Array): void;
  /** Sends one request message; resolves false once the call is over. */
  send(value: unknown): Promise<boolean>;
  /** Half-closes the request side. */
  end(): void;
  /** Cancels the call; its outcome is `cancelled` (or `reason`). */
  cancel(reason?: unknown): void;
  /** Runs `stop` once the call is over, whoever ended it (at once if it is over). */
  onSettled(stop: () => void): void;
}

/**
 * The headers of one method's attempts: the prepared ones (complete, as the transport sends
 * them) when a call adds nothing of its own, else the call's headers with the time left before
 * its deadline in the protocol's timeout header.
 */
export class MethodHeaders {
  constructor(
    /** The headers every call repeats ({@link WireMethod.headers}). */
    readonly base: OutgoingHttpHeaders,
    /** `base` as sent when the call adds nothing (pseudo-headers included where the transport wants them). */
    private readonly prepared: OutgoingHttpHeaders,
    private readonly timeoutHeader: string,
    private readonly formatTimeout: (ms: number) => string,
    /** Completes a call's own headers as the transport wants them (gRPC adds its pseudo-headers). */
    private readonly complete: (h: OutgoingHttpHeaders) => OutgoingHttpHeaders = (h) => h,
  ) {}

  /** The headers of one attempt of a call that sends `headers` ({@link base} or its own copy). */
  of(headers: OutgoingHttpHeaders, scope: CallScope): OutgoingHttpHeaders {
    if (headers === this.base && scope.deadline === undefined) return this.prepared;
    const ms = scope.remaining();
    return this.complete(ms === undefined ? headers : { ...headers, [this.timeoutHeader]: this.formatTimeout(ms) });
  }
}

/**
 * The content type of a protocol that carries its messages as `json` (ProtoJSON) or `proto`:
 * the option, or the protocol's default; anything else, or a `serialization`, is refused.
 */
export function jsonOrProto(o: WireOptions, name: string, fallback: "json" | "proto"): string {
  refuseSerialization(o, name);
  const ct = o.contentType ?? fallback;
  if (ct !== "json" && ct !== "proto") throw new TypeError(`createClient: protocol ${name} takes contentType json or proto, got "${ct}"`);
  return ct;
}

/**
 * Refuses the `serialization` option on a protocol that does not carry Dubbo's wrapper (only
 * gRPC does): the caller asked for Java serializations that this protocol would silently drop.
 */
export function refuseSerialization(o: WireOptions, name: string): void {
  if (o.serialization !== undefined) {
    throw new TypeError(`createClient: serialization ${o.serialization} is Dubbo's wrapper over gRPC; protocol must be "grpc", got "${name}"`);
  }
}
