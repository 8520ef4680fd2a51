// Owns `EnvelopedMethod`, `grpcClient`. A protocol whose calls are length-prefixed messages on an
// HTTP/2 stream, as one method prepared. Must not change: gRPC's wire rules (5-byte message prefix,
// grpc-status in trailers) that grpc-js and other peers rely on.
import type { OutgoingHttpHeaders } from "node:http";
import type * as http2 from "node:http2";
import { type Compression, GRPC_ACCEPT_ENCODING, GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { H, TRI_PROTOCOL_VERSION } from "../protocol/headers.js";
import type { CallOptions } from "../runtime/call-options.js";
import {
  MethodHeaders,
  type ProtocolClient,
  type ProtocolSession,
  type ResponseMode,
  type WireMethod,
  type WireOptions,
  type WireSettings,
} from "../runtime/client-protocol.js";
import type { Attempt } from "../runtime/invocation.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { type CallScope, NEVER_ABORTS } from "../transport/client/call-scope.js";
import { Http1Transport } from "../transport/client/http1.js";
import type { Provider } from "../transport/client/provider.js";
import { GRPC_DIALECT, EnvelopedClientCall, type GrpcCallSettings, grpcHeaders, type StreamDialect } from "./client-call.js";
import type { GrpcMessageFormat } from "../message/codec-types.js";
import { type MessageCodec, messageCodec } from "../message/message-codec.js";

/** The message formats of Dubbo's wrapper the `serialization` option selects. */
const SERIALIZATIONS = ["hessian2", "fastjson2", "json"];

/** A protocol whose calls are length-prefixed messages on an HTTP/2 stream, as one method prepared. */
export class EnvelopedMethod implements WireMethod {
  readonly headers: OutgoingHttpHeaders;
  private readonly grpcHeaders: MethodHeaders;

  constructor(
    readonly protocol: string,
    readonly md: MethodDescriptor,
    readonly codec: MessageCodec,
    headers: OutgoingHttpHeaders,
    private readonly settings: WireSettings,
    private readonly dialect: StreamDialect,
    private readonly compression: Compression | undefined,
  ) {
    this.headers = headers;
    this.grpcHeaders = new MethodHeaders(headers, grpcHeaders(md.path, headers), dialect.timeoutHeader, dialect.formatTimeout, (h) => grpcHeaders(md.path, h));
  }

  encodeArgs(args: readonly unknown[]): Uint8Array {
    return this.codec.encodeArgs(args);
  }

  open(p: Provider, headers: OutgoingHttpHeaders, scope: CallScope, opts: CallOptions | undefined, mode: ResponseMode): Promise<EnvelopedClientCall> {
    const h2 = this.settings.http2();
    const requestHeaders = this.grpcHeaders.of(headers, scope);
    const settings: GrpcCallSettings = {
      codec: this.codec,
      maxBytes: this.settings.maxBytes,
      compression: this.compression,
      signal: scope.signal,
      options: opts,
      dialect: this.dialect,
    };
    const h1 = mode === "stream" && this.md.kind === "server_streaming" ? this.http1Stream(p, requestHeaders) : undefined;
    if (h1) return Promise.resolve(new EnvelopedClientCall(h1, p, settings, mode));
    // A connected session takes the stream at once: no promise to wait for.
    const now = scope.signal === NEVER_ABORTS ? h2.openNow(p, requestHeaders) : undefined;
    if (now) return Promise.resolve(new EnvelopedClientCall(now, p, settings, mode));
    return h2.open(p, requestHeaders, scope.signal).then((stream) => new EnvelopedClientCall(stream, p, settings, mode));
  }

  /**
   * A server stream over HTTP/1.1 when the client asks for it (`httpVersion: "1.1"`) and the
   * protocol keeps its outcome in the body (Connect): undefined otherwise (HTTP/2).
   */
  private http1Stream(p: Provider, requestHeaders: OutgoingHttpHeaders): http2.ClientHttp2Stream | undefined {
    if (!this.dialect.serverStreamsOverHttp1 || String(this.settings.httpVersion) !== "1.1") return undefined;
    const transport = this.settings.unary();
    if (!(transport instanceof Http1Transport)) return undefined;
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(requestHeaders)) if (k.charCodeAt(0) !== 58 /* : */ && k !== "te") headers[k] = v;
    // The adapter has the parts of an HTTP/2 client stream the call reads (http1-stream.ts).
    return transport.openStream(p, this.md.path, headers) as unknown as http2.ClientHttp2Stream;
  }

  /** A unary call on an HTTP/2 stream: one request message, one response message. */
  unary(args: readonly unknown[], headers: OutgoingHttpHeaders, scope: CallScope, opts: CallOptions | undefined): Attempt<unknown> {
    const body = this.codec.encodeArgs(args);
    return (p) =>
      this.open(p, headers, scope, opts, "single").then((call) => {
        call.sendArgs(body);
        return call.result();
      });
  }
}

/** gRPC's content types: the `contentType` option → message format and Content-Type. */
function grpcFormat(contentType: string): { format: GrpcMessageFormat; mediaType: string } {
  return contentType === "grpc+json" ? { format: "json", mediaType: "application/grpc+json" } : { format: "proto", mediaType: "application/grpc+proto" };
}

class GrpcSession implements ProtocolSession {
  private readonly compression: Compression | undefined;

  constructor(private readonly settings: WireSettings) {
    const name = settings.compression;
    this.compression = name === undefined ? undefined : GRPC_COMPRESSIONS.get(name);
    if (name !== undefined && !this.compression) throw new TypeError(`createClient: gRPC supports gzip and deflate compression, not "${name}"`);
  }

  prepare(md: MethodDescriptor, base: OutgoingHttpHeaders): EnvelopedMethod {
    const { format, mediaType } = grpcFormat(this.settings.contentType);
    // IDL-less methods of a client with `serialization` go in Dubbo's wrapper, in that serialization.
    const s = this.settings.serialization;
    const wrapped = s !== undefined && md.requestType === undefined ? (s === "json" ? "wrapper" : (s as GrpcMessageFormat)) : undefined;
    const headers: OutgoingHttpHeaders = { ...base, [H.contentType]: mediaType };
    // Connect servers tell dubbo-js's Triple variant from Connect by this header.
    headers[H.triProtocolVersion] = TRI_PROTOCOL_VERSION;
    headers[H.grpcAcceptEncoding] = GRPC_ACCEPT_ENCODING;
    if (this.compression) headers[H.grpcEncoding] = this.compression.name;
    return new EnvelopedMethod("grpc", md, messageCodec(md, wrapped ?? format), headers, this.settings, GRPC_DIALECT, this.compression);
  }
}

/** The gRPC protocol's client half: every call on an HTTP/2 stream, the outcome in trailers. */
export const grpcClient: ProtocolClient = {
  name: "grpc",
  claims: (o: WireOptions) => o.serialization !== undefined || (o.contentType?.startsWith("grpc+") ?? false),
  contentType(o: WireOptions): string {
    if (o.httpVersion === "1.1") throw new TypeError("createClient: gRPC needs HTTP/2, not HTTP/1.1");
    if (o.serialization !== undefined) {
      if (!SERIALIZATIONS.includes(o.serialization)) {
        throw new TypeError(`createClient: serialization must be "hessian2", "fastjson2" or "json", got "${o.serialization}"`);
      }
      if (o.contentType !== undefined && o.contentType !== "grpc+proto") {
        throw new TypeError(`createClient: serialization ${o.serialization} is sent as grpc+proto, not "${o.contentType}"`);
      }
      return "grpc+proto";
    }
    const ct = o.contentType ?? "grpc+proto";
    if (ct !== "grpc+proto" && ct !== "grpc+json") throw new TypeError(`createClient: protocol grpc needs contentType grpc+proto or grpc+json, got "${ct}"`);
    return ct;
  },
  open: (settings: WireSettings) => new GrpcSession(settings),
};
