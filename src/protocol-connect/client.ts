// Owns `CONNECT_DIALECT`, `connectClient`. Connect's streams: enveloped messages, the outcome in an
// end-stream message flagged 0x02 that must come. Must not change: the Connect protocol's wire
// rules, as connect-es speaks them.
import type { OutgoingHttpHeaders } from "node:http";
import { type Compression, HTTP_ACCEPT_ENCODING, HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { H } from "../protocol/headers.js";
import { codeFromGrpcHttpStatus } from "../protocol/grpc-http-status.js";
import { type ProtocolClient, type ProtocolSession, jsonOrProto, type WireMethod, type WireOptions, type WireSettings } from "../runtime/client-protocol.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { StreamDialect } from "../protocol-grpc/client-call.js";
import { EnvelopedMethod } from "../protocol-grpc/client.js";
import { messageCodec } from "../message/message-codec.js";
import { httpCompression, WholeBodyUnary } from "../protocol-triple/client.js";
import { CH, CONNECT_ACCEPT_ENCODING, CONNECT_FLAG_END_STREAM, parseEndStream } from "./wire.js";

/** Connect's streams: enveloped messages, the outcome in an end-stream message flagged 0x02 that must come. */
const CONNECT_DIALECT: StreamDialect = {
  name: "Connect stream",
  endFlag: CONNECT_FLAG_END_STREAM,
  acceptsContentType: (ct) => ct.startsWith("application/connect+"),
  encodingHeader: CH.contentEncoding,
  compressions: HTTP_COMPRESSIONS,
  readEndFrame: (payload) => {
    const end = parseEndStream(payload);
    return { trailers: end.trailers as Record<string, string | string[]>, error: end.error };
  },
  endFrameRequired: true,
  timeoutHeader: CH.timeoutMs,
  formatTimeout: String,
  serverStreamsOverHttp1: true,
};

class ConnectSession implements ProtocolSession {
  private readonly compression: Compression | undefined;

  constructor(private readonly settings: WireSettings) {
    this.compression = httpCompression(settings);
  }

  prepare(md: MethodDescriptor, base: OutgoingHttpHeaders): WireMethod {
    const streaming = md.kind !== "unary";
    const json = this.settings.contentType === "json";
    const contentType = `application/${streaming ? "connect+" : ""}${json ? "json" : "proto"}`;
    const headers: OutgoingHttpHeaders = { ...base, [H.contentType]: contentType, [CH.protocolVersion]: "1" };
    const codec = messageCodec(md, json ? "protojson" : "proto");
    if (!streaming) {
      headers[H.acceptEncoding] = HTTP_ACCEPT_ENCODING;
      // A reply without a usable error body: Connect infers the code as gRPC does.
      return new WholeBodyUnary("connect", md, codec, headers, this.settings, this.compression, CH.timeoutMs, codeFromGrpcHttpStatus);
    }
    headers[CH.acceptEncoding] = CONNECT_ACCEPT_ENCODING;
    if (this.compression) headers[CH.contentEncoding] = this.compression.name;
    return new EnvelopedMethod("connect", md, codec, headers, this.settings, CONNECT_DIALECT, this.compression);
  }
}

/** The Connect protocol's client half: unary as plain POSTs (HTTP/1.1 or HTTP/2), streams over HTTP/2. */
export const connectClient: ProtocolClient = {
  name: "connect",
  claims: () => false,
  contentType: (o: WireOptions) => jsonOrProto(o, "connect", "json"),
  open: (settings: WireSettings) => new ConnectSession(settings),
};
