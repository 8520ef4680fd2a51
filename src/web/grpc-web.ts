// Owns `GrpcWebWeb`. gRPC-Web over fetch (grpc/grpc PROTOCOL-WEB), binary or text: one enveloped
// request message, the response's messages and its trailer frame (0x80) read as they stream in.
// Must not change: no node: import and no server code: it runs in browsers (the bundle budget test
// checks).
import { Code } from "../protocol/code.js";
import { firstHeader, H, metadataOf, trailersOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromGrpcHttpStatus } from "../protocol/grpc-http-status.js";
import { base64Encode } from "../protocol/bytes.js";
import { envelope } from "../message/framing.js";
import { errorFromGrpcTrailers } from "../protocol-grpc/status.js";
import { formatGrpcTimeout } from "../protocol-grpc/wire.js";
import { decodeBase64Chunks, GRPC_WEB_FLAG_TRAILERS, parseTrailerBlock } from "../protocol-grpc-web/wire.js";
import { headersOf } from "./scope.js";
import { envelopes } from "./connect.js";
import { type FetchCall, send, type WebCodec, type WebWireMethod } from "./wire.js";

/**
 * gRPC-Web over fetch (grpc/grpc PROTOCOL-WEB), binary or text: one enveloped request message,
 * the response's messages and its trailer frame (0x80) read as they stream in. Loaded with the
 * protobuf support (a dynamic import) when a client chooses `grpc-web`: it reads gRPC's status
 * details, which are protobuf.
 */
export class GrpcWebWeb implements WebWireMethod {
  private readonly contentType: string;

  constructor(
    private readonly codec: WebCodec,
    json: boolean,
    private readonly text: boolean,
  ) {
    this.contentType = text ? "application/grpc-web-text" : `application/grpc-web+${json ? "json" : "proto"}`;
  }

  async unary(args: readonly unknown[], call: FetchCall): Promise<unknown> {
    let result: { value: unknown } | undefined;
    for await (const v of this.serverStream(args, call)) {
      if (result) throw new RpcError(Code.Unimplemented, "protocol error: more than one message in the response of a unary method");
      result = { value: v };
    }
    if (!result) throw new RpcError(Code.Unimplemented, "protocol error: no message in the response of a unary method");
    return result.value;
  }

  async *serverStream(args: readonly unknown[], call: FetchCall): AsyncGenerator<unknown> {
    const headers: Record<string, string> = { ...call.headers, [H.contentType]: this.contentType, accept: this.contentType, "x-grpc-web": "1" };
    const ms = call.scope.remaining();
    if (ms !== undefined) headers[H.grpcTimeout] = formatGrpcTimeout(ms);
    const frame = envelope(0, this.codec.encodeArgs(args));
    const res = await send(call, "POST", call.url, headers, this.text ? new TextEncoder().encode(base64Encode(frame)) : frame);
    const h = headersOf(res);
    if (res.status !== 200) {
      void res.body?.cancel().catch(() => {});
      throw new RpcError(codeFromGrpcHttpStatus(res.status), `HTTP status ${res.status} in a gRPC-Web response`, {
        metadata: metadataOf(h),
        httpStatus: res.status,
      });
    }
    if (firstHeader(h, H.grpcStatus) !== undefined) {
      void res.body?.cancel().catch(() => {});
      const err = errorFromGrpcTrailers(h);
      if (err) throw err;
      call.options?.onHeaders?.(metadataOf(h));
      return;
    }
    call.options?.onHeaders?.(metadataOf(h));
    for await (const e of envelopes(res, call, this.text ? decodeBase64Chunks : undefined)) {
      if (e.flags & GRPC_WEB_FLAG_TRAILERS) {
        const trailers = parseTrailerBlock(e.data);
        call.options?.onTrailers?.(trailersOf(trailers));
        const err = errorFromGrpcTrailers(trailers);
        if (err) throw err;
        return;
      }
      if (e.flags !== 0) throw new RpcError(Code.Internal, `protocol error: a gRPC-Web message flagged ${e.flags} (no compression was asked for)`);
      yield this.codec.decodeResponse(e.data);
    }
    throw new RpcError(Code.Internal, "protocol error: the gRPC-Web response has no trailer frame");
  }
}
