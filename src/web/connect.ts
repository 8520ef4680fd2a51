// Owns `ConnectWeb`, `envelopes`. Connect over fetch: unary as POST (or GET), server streams as
// enveloped messages; the envelopes of a streamed response (gRPC-Web's too). Loaded by a dynamic
// import on a client's first Connect call or server stream. Must not change: no node: import and no
// server code: it runs in browsers (the bundle budget test checks).
import { base64Encode, utf8Decode } from "../protocol/bytes.js";
import { Code } from "../protocol/code.js";
import { errorFromHttpResponse } from "../protocol/error-reply.js";
import { H, metadataOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromGrpcHttpStatus } from "../protocol/grpc-http-status.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { CH, CONNECT_FLAG_END_STREAM, parseEndStream } from "../protocol-connect/end-stream.js";
import { type Envelope, EnvelopeReader, envelope } from "../message/framing.js";
import { headersOf, readBody } from "./scope.js";
import { type FetchCall, send, type WebCodec, type WebWireMethod, wholeBodyReply } from "./wire.js";

/**
 * The envelopes of a streamed response body, as they arrive; `text`: the body is gRPC-Web text
 * (base64, each write padded on its own). An incomplete envelope at the end is `internal`.
 */
export async function* envelopes(res: Response, call: FetchCall, decodeText?: (s: string) => Uint8Array): AsyncGenerator<Envelope> {
  // Flags besides "compressed": a Connect end-stream message (0x02), a gRPC-Web trailer frame (0x80).
  const reader = new EnvelopeReader(call.maxBytes, 0x82);
  const body = res.body?.getReader();
  if (!body) return;
  let text = "";
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof body.read>>;
      try {
        chunk = await body.read();
      } catch (e) {
        throw call.scope.fetchFailure(e, call.url);
      }
      if (chunk.done) break;
      let bytes = chunk.value;
      if (decodeText) {
        text += utf8Decode(bytes).replace(/\s/g, "");
        const whole = text.length - (text.length % 4);
        bytes = decodeText(text.slice(0, whole));
        text = text.slice(whole);
      }
      yield* reader.push(bytes);
    }
  } finally {
    void body.cancel().catch(() => {});
  }
  if (reader.pending || text.length > 0) throw new RpcError(Code.Internal, "protocol error: the response body ended inside a message");
}

/** Connect: unary as POST (or GET for idempotent methods with `useGet`), server streams as enveloped messages. */
export class ConnectWeb implements WebWireMethod {
  constructor(
    private readonly md: MethodDescriptor,
    private readonly codec: WebCodec,
    private readonly json: boolean,
    private readonly useGet: boolean,
  ) {}

  private headers(call: FetchCall, contentType: string | undefined): Record<string, string> {
    const h: Record<string, string> = { ...call.headers, [CH.protocolVersion]: "1" };
    if (contentType) h[H.contentType] = contentType;
    const ms = call.scope.remaining();
    if (ms !== undefined) h[CH.timeoutMs] = String(ms);
    return h;
  }

  async unary(args: readonly unknown[], call: FetchCall): Promise<unknown> {
    const body = this.codec.encodeArgs(args);
    const res =
      this.useGet && this.md.idempotent
        ? await send(call, "GET", `${call.url}?${getQuery(body, this.json)}`, this.headers(call, undefined))
        : await send(call, "POST", call.url, this.headers(call, this.json ? "application/json" : "application/proto"), body);
    return this.codec.decodeResponse(await wholeBodyReply(res, call, this.json, codeFromGrpcHttpStatus));
  }

  async *serverStream(args: readonly unknown[], call: FetchCall): AsyncGenerator<unknown> {
    const headers = this.headers(call, `application/connect+${this.json ? "json" : "proto"}`);
    const res = await send(call, "POST", call.url, headers, envelope(0, this.codec.encodeArgs(args)));
    const h = headersOf(res);
    if (res.status !== 200) throw errorFromHttpResponse(res.status, h, await readBody(res, call.maxBytes), codeFromGrpcHttpStatus);
    call.options?.onHeaders?.(metadataOf(h));
    for await (const e of envelopes(res, call)) {
      if (e.flags & CONNECT_FLAG_END_STREAM) {
        const end = parseEndStream(e.data);
        call.options?.onTrailers?.(end.trailers);
        if (end.error) throw end.error;
        return;
      }
      if (e.flags !== 0) throw new RpcError(Code.Internal, `protocol error: a Connect message flagged ${e.flags} (no compression was asked for)`);
      yield this.codec.decodeResponse(e.data);
    }
    throw new RpcError(Code.Internal, "protocol error: the Connect stream ended without its end-stream message");
  }
}

/** A Connect GET's query: `connect=v1`, the encoding, the message (percent-encoded JSON, or URL-safe base64 for proto). */
function getQuery(body: Uint8Array, json: boolean): string {
  if (json) return `connect=v1&encoding=json&message=${encodeURIComponent(utf8Decode(body))}`;
  const b64 = base64Encode(body).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return `connect=v1&encoding=proto&base64=1&message=${b64}`;
}
