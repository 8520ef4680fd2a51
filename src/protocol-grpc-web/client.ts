// Owns `GRPC_WEB_DIALECT`, `grpcWebClient`. gRPC-Web on an HTTP/2 stream: gRPC's messages, the
// outcome in a trailer frame flagged 0x80. Must not change: gRPC-Web's wire rules (trailers as a
// flagged frame in the body) that grpc-web clients rely on.
import type { OutgoingHttpHeaders } from "node:http";
import { type Compression, GRPC_ACCEPT_ENCODING, GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { H, metadataOf, trailersOf } from "../protocol/headers.js";
import type { CallOptions } from "../runtime/call-options.js";
import { type ProtocolClient, type ProtocolSession, jsonOrProto, type WireMethod, type WireOptions, type WireSettings } from "../runtime/client-protocol.js";
import { HttpUnaryMethod } from "../runtime/http-unary.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import type { StreamDialect } from "../protocol-grpc/client-call.js";
import { EnvelopedMethod } from "../protocol-grpc/client.js";
import { requestFrame } from "../protocol-grpc/client-call.js";
import { type MessageCodec, messageCodec } from "../message/message-codec.js";
import { errorFromGrpcTrailers } from "../protocol-grpc/status.js";
import { formatGrpcTimeout } from "../protocol-grpc/wire.js";
import { grpcWebReplyMessage } from "./client-reply.js";
import { GRPC_WEB_FLAG_TRAILERS, parseTrailerBlock } from "./wire.js";

/** gRPC-Web on an HTTP/2 stream: gRPC's messages, the outcome in a trailer frame flagged 0x80. */
const GRPC_WEB_DIALECT: StreamDialect = {
  name: "gRPC-Web",
  endFlag: GRPC_WEB_FLAG_TRAILERS,
  acceptsContentType: (ct) => ct.startsWith("application/grpc"),
  encodingHeader: H.grpcEncoding,
  compressions: GRPC_COMPRESSIONS,
  readEndFrame(payload) {
    const trailers = parseTrailerBlock(payload);
    return { trailers, error: errorFromGrpcTrailers(trailers) };
  },
  endFrameRequired: false,
  timeoutHeader: H.grpcTimeout,
  formatTimeout: formatGrpcTimeout,
};

/** A unary gRPC-Web call: one framed message posted whole, the reply's message and trailer frame read whole. */
class GrpcWebUnary extends HttpUnaryMethod {
  constructor(
    md: MethodDescriptor,
    private readonly codec: MessageCodec,
    headers: OutgoingHttpHeaders,
    settings: WireSettings,
    private readonly compression: Compression | undefined,
  ) {
    super("grpc-web", md, headers, settings, H.grpcTimeout, formatGrpcTimeout);
  }

  encodeArgs(args: readonly unknown[]): Uint8Array {
    return this.codec.encodeArgs(args);
  }

  protected body(args: readonly unknown[], headers: OutgoingHttpHeaders): { body: Uint8Array; headers: OutgoingHttpHeaders } {
    return { body: requestFrame(this.codec.encodeArgs(args), this.compression), headers };
  }

  protected read(reply: HttpReply, opts: CallOptions | undefined): unknown {
    opts?.onHeaders?.(metadataOf(reply.headers));
    const { message, trailers } = grpcWebReplyMessage(reply, this.settings.maxBytes);
    opts?.onTrailers?.(trailersOf(trailers));
    return this.codec.decodeResponse(message);
  }
}

class GrpcWebSession implements ProtocolSession {
  private readonly compression: Compression | undefined;

  constructor(private readonly settings: WireSettings) {
    const name = settings.compression;
    this.compression = name === undefined ? undefined : GRPC_COMPRESSIONS.get(name);
    if (name !== undefined && !this.compression) throw new TypeError(`createClient: gRPC-Web supports gzip and deflate compression, not "${name}"`);
  }

  prepare(md: MethodDescriptor, base: OutgoingHttpHeaders): WireMethod {
    const json = this.settings.contentType === "json";
    const headers: OutgoingHttpHeaders = { ...base, [H.contentType]: `application/grpc-web+${json ? "json" : "proto"}`, "x-grpc-web": "1" };
    headers[H.grpcAcceptEncoding] = GRPC_ACCEPT_ENCODING;
    if (this.compression) headers[H.grpcEncoding] = this.compression.name;
    const codec = messageCodec(md, json ? "protojson" : "proto");
    if (md.kind === "unary") return new GrpcWebUnary(md, codec, headers, this.settings, this.compression);
    return new EnvelopedMethod("grpc-web", md, codec, headers, this.settings, GRPC_WEB_DIALECT, this.compression);
  }
}

/** The gRPC-Web protocol's client half: unary over HTTP/1.1 or HTTP/2, streams over HTTP/2. */
export const grpcWebClient: ProtocolClient = {
  name: "grpc-web",
  claims: () => false,
  contentType: (o: WireOptions) => jsonOrProto(o, "grpc-web", "proto"),
  open: (settings: WireSettings) => new GrpcWebSession(settings),
};
