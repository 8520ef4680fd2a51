// Owns `grpcWebReplyMessage`. Reads a unary gRPC-Web response: HTTP 200, then one message and a
// trailer frame (0x80), or a trailers-only answer with the status in the headers. Must not change:
// gRPC-Web's wire rules (trailers as a flagged frame in the body) that grpc-web clients rely on.
import { Code } from "../protocol/code.js";
import { GRPC_COMPRESSIONS } from "../protocol/compression.js";
import { firstHeader, H, type HeaderMap, metadataOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromGrpcHttpStatus } from "../protocol/grpc-http-status.js";
import { MessageReader, type MessageSink } from "../message/message-reader.js";
import { errorFromGrpcTrailers } from "../protocol-grpc/status.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import { GRPC_WEB_FLAG_TRAILERS, parseTrailerBlock } from "./wire.js";

/** Collects the messages and the trailer frame of a whole gRPC-Web response body. */
class ReplyFrames implements MessageSink {
  messages: Buffer[] = [];
  trailers: Record<string, string | string[]> | undefined = undefined;
  error: RpcError | undefined = undefined;
  onMessage(payload: Buffer): void {
    if (this.trailers) throw new RpcError(Code.Internal, "protocol error: a message after the gRPC-Web trailer frame");
    this.messages.push(payload);
  }
  onMessagesEnd(err: RpcError | undefined): void {
    this.error = err;
  }
  onEndFrame(_flags: number, payload: Buffer): void {
    this.trailers = parseTrailerBlock(payload);
  }
}

/**
 * Reads a unary gRPC-Web response: HTTP 200, then one message and a trailer frame (0x80), or a
 * trailers-only answer with the status in the headers. Returns the one message, or throws the
 * error the status says.
 */
export function grpcWebReplyMessage(reply: HttpReply, maxBytes: number): { message: Buffer; trailers: HeaderMap } {
  const h = reply.headers;
  if (reply.status !== 200) {
    throw new RpcError(codeFromGrpcHttpStatus(reply.status), `HTTP status ${reply.status} in a gRPC-Web response`, {
      metadata: metadataOf(h),
      httpStatus: reply.status,
    });
  }
  if (firstHeader(h, H.grpcStatus) !== undefined) {
    const err = errorFromGrpcTrailers(h);
    throw err ?? new RpcError(Code.Unimplemented, "protocol error: a trailers-only gRPC-Web response has no message");
  }
  const ct = firstHeader(h, H.contentType) ?? "";
  if (!ct.startsWith("application/grpc-web")) {
    throw new RpcError(Code.Internal, `the response has Content-Type "${ct}" where application/grpc-web was expected`, { metadata: metadataOf(h) });
  }
  const enc = firstHeader(h, H.grpcEncoding);
  const frames = new ReplyFrames();
  const reader = new MessageReader(maxBytes, enc && enc !== "identity" ? GRPC_COMPRESSIONS.get(enc) : undefined, frames, GRPC_WEB_FLAG_TRAILERS);
  reader.onBodyData(reply.body);
  reader.onBodyEnd();
  if (frames.error) throw frames.error;
  if (!frames.trailers) throw new RpcError(Code.Internal, "protocol error: the gRPC-Web response has no trailer frame");
  const err = errorFromGrpcTrailers(frames.trailers);
  if (err) throw err;
  if (frames.messages.length !== 1) {
    throw new RpcError(Code.Unimplemented, `protocol error: ${frames.messages.length} messages in the response of a unary method`);
  }
  return { message: frames.messages[0], trailers: frames.trailers };
}
