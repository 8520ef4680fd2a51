// Owns `WholeBodyUnary`, `httpCompression`, `tripleClient`. A unary call as one HTTP exchange with
// a whole body each way (Triple HTTP, and Connect's unary calls, which share its error body): the
// body compressed when the client … Must not change: Triple's wire rules as Dubbo Java speaks them
// (tri-* headers, the HTTP unary and stream forms).
import type { OutgoingHttpHeaders } from "node:http";
import type { Code } from "../protocol/code.js";
import { COMPRESS_MIN_BYTES, type Compression, GRPC_COMPRESSIONS, HTTP_ACCEPT_ENCODING, HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { H, metadataOf, TRAILER_PREFIX, TRI_PROTOCOL_VERSION, trailersOf } from "../protocol/headers.js";
import type { CallOptions } from "../runtime/call-options.js";
import {
  type ProtocolClient,
  type ProtocolSession,
  refuseSerialization,
  type WireMethod,
  type WireOptions,
  type WireSettings,
} from "../runtime/client-protocol.js";
import { HttpUnaryMethod } from "../runtime/http-unary.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import { grpcClient } from "../protocol-grpc/client.js";
import type { MessageCodec } from "../message/message-codec.js";
import { messageCodec } from "../message/message-codec.js";
import { tripleReplyBody } from "./client-reply.js";
import { downloadAttempt, downloadOfReply, isFileArg, multipartAttempt } from "./client-files.js";
import type { CallScope } from "../transport/client/call-scope.js";
import type { Attempt } from "../runtime/invocation.js";
import { SseServerStream } from "./sse-client.js";
import { withJsonStreamHint } from "./stream-hint.js";

/**
 * A unary call as one HTTP exchange with a whole body each way (Triple HTTP, and Connect's
 * unary calls, which share its error body): the body compressed when the client compresses and
 * it is worth it, the reply's outcome from its status, `grpc-status` or error body.
 */
export class WholeBodyUnary extends HttpUnaryMethod {
  constructor(
    protocol: string,
    md: MethodDescriptor,
    private readonly codec: MessageCodec,
    headers: OutgoingHttpHeaders,
    settings: WireSettings,
    private readonly compression: Compression | undefined,
    timeoutHeader: string,
    /** The code of an error reply without a usable body, from its HTTP status (undefined: Triple's table). */
    private readonly fromHttp?: (status: number) => Code,
  ) {
    super(protocol, md, headers, settings, timeoutHeader, String);
  }

  encodeArgs(args: readonly unknown[]): Uint8Array {
    return this.codec.encodeArgs(args);
  }

  protected body(args: readonly unknown[], headers: OutgoingHttpHeaders): { body: Uint8Array; headers: OutgoingHttpHeaders } {
    const body = this.codec.encodeArgs(args);
    const c = this.compression;
    if (!c || body.byteLength < COMPRESS_MIN_BYTES) return { body, headers };
    return { body: c.compress(body), headers: { ...headers, [H.contentEncoding]: c.name } };
  }

  protected read(reply: HttpReply, opts: CallOptions | undefined): unknown {
    const body = tripleReplyBody(reply, this.settings.maxBytes, this.headers[H.contentType] as string, this.fromHttp);
    opts?.onHeaders?.(metadataOf(reply.headers));
    // Unary trailers: `trailer-` headers (Connect, dubbo-js, us), or real HTTP/2 trailers.
    opts?.onTrailers?.({ ...trailersOf(reply.headers, TRAILER_PREFIX), ...trailersOf(reply.trailers) });
    return this.codec.decodeResponse(body);
  }
}

/**
 * Triple HTTP's unary method, which also carries files (client-files.ts): a call with a `File`,
 * `Blob`, `Readable` or `StreamedFile` argument goes as multipart/form-data, and a file reply (a
 * method returning a `Download`, `Readable` or `Blob`) comes back as a `Download`.
 */
class TripleUnary extends WholeBodyUnary {
  /** A parameter may take a file (its type is bytes, a file, an upload or untyped): only then are arguments looked at. */
  private readonly takesFiles = this.md.params.some((p) => FILE_KINDS.has(p.type.kind));

  override unary(args: readonly unknown[], headers: OutgoingHttpHeaders, scope: CallScope, opts: CallOptions | undefined): Attempt<unknown> {
    if (this.takesFiles && args.some(isFileArg)) return multipartAttempt(this.md, this.settings, args, headers, scope, (r) => this.read(r, opts));
    if (this.md.returns?.kind === "download") return downloadAttempt(this.md, this.settings, this.encodeArgs(args), headers, scope, (r) => this.read(r, opts));
    return super.unary(args, headers, scope, opts);
  }

  protected override read(reply: HttpReply, opts: CallOptions | undefined): unknown {
    return downloadOfReply(reply) ?? super.read(reply, opts);
  }
}

/** The parameter types a `File`, `Blob`, `Readable` or `StreamedFile` argument may be given for. */
const FILE_KINDS: ReadonlySet<string> = new Set(["bytes", "file", "upload", "any"]);

/** The HTTP body compression the client's `compression` option names (undefined: identity). */
export function httpCompression(settings: WireSettings): Compression | undefined {
  return settings.compression === undefined ? undefined : HTTP_COMPRESSIONS.get(settings.compression);
}

class TripleSession implements ProtocolSession {
  private readonly compression: Compression | undefined;
  /** Streams exist only in gRPC among Triple's forms: a Triple client streams as gRPC. */
  private readonly streams: ProtocolSession;

  constructor(private readonly settings: WireSettings) {
    this.compression = httpCompression(settings);
    const grpcCompression = settings.compression === undefined ? undefined : GRPC_COMPRESSIONS.get(settings.compression);
    this.streams = grpcClient.open({
      ...settings,
      contentType: settings.contentType === "json" ? "grpc+json" : "grpc+proto",
      // Compressions gRPC lacks (br) leave the streams uncompressed.
      compression: grpcCompression?.name,
    });
  }

  prepare(md: MethodDescriptor, base: OutgoingHttpHeaders): WireMethod {
    if (md.kind === "server_streaming" && String(this.settings.httpVersion) === "1.1") {
      // A server stream over HTTP/1.1 is read as Server-Sent Events (sse-client.ts).
      const headers: OutgoingHttpHeaders = { ...base, [H.triProtocolVersion]: TRI_PROTOCOL_VERSION };
      return new SseServerStream(md, messageCodec(md, "json"), headers, this.settings);
    }
    if (md.kind !== "unary") {
      const m = this.streams.prepare(md, base);
      return this.settings.contentType === "json" ? withJsonStreamHint(m) : m;
    }
    // IDL methods use their messages; IDL-less ones JSON, the only body such a method takes over Triple HTTP.
    const idl = md.requestType !== undefined && md.responseType !== undefined;
    const json = this.settings.contentType === "json" || !idl;
    const headers: OutgoingHttpHeaders = { ...base, [H.contentType]: json ? "application/json" : "application/proto" };
    headers[H.triProtocolVersion] = TRI_PROTOCOL_VERSION;
    headers[H.acceptEncoding] = HTTP_ACCEPT_ENCODING;
    const codec = messageCodec(md, json ? "json" : "proto");
    // File arguments go as multipart, and a file reply comes back as a Download (client-files.ts).
    return new TripleUnary("triple", md, codec, headers, this.settings, this.compression, H.triServiceTimeout);
  }
}

/** Triple's client half: unary calls as plain HTTP POSTs (HTTP/1.1 or HTTP/2); streams as gRPC. */
export const tripleClient: ProtocolClient = {
  name: "triple",
  claims: (o: WireOptions) => o.serialization === undefined && (o.contentType === undefined || o.contentType === "json" || o.contentType === "proto"),
  contentType(o: WireOptions): string {
    refuseSerialization(o, "triple");
    const ct = o.contentType ?? "json";
    if (ct.startsWith("grpc+")) throw new TypeError(`createClient: contentType ${ct} is gRPC; use protocol "grpc" (or leave protocol out)`);
    if (ct !== "json" && ct !== "proto") throw new TypeError(`createClient: protocol triple takes contentType json or proto, got "${ct}"`);
    return ct;
  },
  open: (settings: WireSettings) => new TripleSession(settings),
};
