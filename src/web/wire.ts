// Owns `codecOf`, `send`, `envelopes`, `TripleWeb`, … A method's codec: an IDL-less method's JSON
// without loading anything. Must not change: no node: import and no server code: it runs in
// browsers (the bundle budget test checks).
import { needsConverterExtras, useConverterExtras } from "../codec/converters.js";
import { type JsonClientCodec, jsonClientCodec } from "../codec/json-message.js";
import { base64Encode, utf8Decode } from "../protocol/bytes.js";
import { Code } from "../protocol/code.js";
import { errorFromHttpResponse } from "../protocol/error-reply.js";
import { H, metadataOf, TRAILER_PREFIX, TRI_PROTOCOL_VERSION, trailersOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromGrpcHttpStatus, codeFromHttpStatus } from "../protocol/status-table.js";
import type { CallOptions } from "../runtime/call-options.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { CH, CONNECT_FLAG_END_STREAM, parseEndStream } from "../protocol-connect/end-stream.js";
import { type Envelope, EnvelopeReader, envelope } from "../message/framing.js";
import { headersOf, readBody, type WebScope } from "./scope.js";
import type { FetchFn } from "./transport.js";

/** The client half of a method's messages, in one format (the Node client's `MessageCodec`, client side). */
export type WebCodec = JsonClientCodec;

/** The message formats of the Node client's codecs: our JSON (IDL-less), protobuf, ProtoJSON. */
export type WebFormat = "json" | "proto" | "protojson";

/**
 * A method's codec: an IDL-less method's JSON without loading anything; every other format
 * through the Node client's codecs (protobufjs, the derived schema), loaded on first use by a
 * dynamic import, so a JSON-only bundle does not carry them.
 */
export async function codecOf(md: MethodDescriptor, format: WebFormat): Promise<WebCodec> {
  if (format === "json" && md.requestType === undefined) {
    // A result of a Java value class or an upload: their converters, loaded before the codec is built.
    if (md.returns && needsConverterExtras(md.returns)) useConverterExtras((await import("../codec/converter-extras.js")).converterExtras);
    return jsonClientCodec(md);
  }
  const { messageCodec } = await import("../message/message-codec.js");
  return messageCodec(md, format);
}

/** One call over fetch, as the client core hands it to a protocol. */
export interface FetchCall {
  /** The method's URL. */
  readonly url: string;
  /** The protocol-neutral headers: metadata, credentials, version and group. */
  readonly headers: Record<string, string>;
  readonly scope: WebScope;
  readonly fetch: FetchFn;
  readonly maxBytes: number;
  readonly credentials: "omit" | "same-origin" | "include" | undefined;
  readonly options: CallOptions | undefined;
}

/** A method prepared for one protocol: its unary and server-streaming calls over fetch. */
export interface WebWireMethod {
  unary(args: readonly unknown[], call: FetchCall): Promise<unknown>;
  serverStream(args: readonly unknown[], call: FetchCall): AsyncGenerator<unknown>;
}

/** Sends a request; fetch's own failures become the call's error (deadline, cancel, `unavailable`). */
export async function send(call: FetchCall, method: "POST" | "GET", url: string, headers: Record<string, string>, body?: Uint8Array): Promise<Response> {
  try {
    return await call.fetch(url, { method, headers, body: body as RequestInit["body"], signal: call.scope.signal, credentials: call.credentials });
  } catch (e) {
    throw call.scope.fetchFailure(e, url);
  }
}

/** The response headers and `trailer-` headers of a unary reply, handed to the call's options. */
function reportUnary(h: Record<string, string>, opts: CallOptions | undefined): void {
  opts?.onHeaders?.(metadataOf(h));
  opts?.onTrailers?.(trailersOf(h, TRAILER_PREFIX));
}

/** Response media types a JSON or proto request may be answered with. */
const ANSWERS = { json: ["application/json", "text/json"], proto: ["application/proto", "application/x-protobuf", "application/protobuf"] };

/**
 * A whole-body unary reply (Triple HTTP, Connect unary): a non-200 status is the error its body
 * describes (`fromHttp`: the code of a status without a usable body); a 200 in a content type
 * the request cannot be answered with is `internal` naming it.
 */
async function wholeBodyReply(res: Response, call: FetchCall, json: boolean, fromHttp: (s: number) => Code): Promise<Uint8Array> {
  const bytes = await readBody(res, call.maxBytes);
  const h = headersOf(res);
  if (res.status !== 200) throw errorFromHttpResponse(res.status, h, bytes, fromHttp);
  const ct = h[H.contentType];
  const expected = json ? ANSWERS.json : ANSWERS.proto;
  const type = ct?.split(";")[0].trim().toLowerCase();
  if (type === undefined || !expected.includes(type)) {
    throw new RpcError(Code.Internal, `the response has Content-Type ${ct === undefined ? "(none)" : `"${ct}"`} where ${expected.join(" or ")} was expected`, {
      metadata: metadataOf(h),
      httpStatus: res.status,
    });
  }
  reportUnary(h, call.options);
  return bytes;
}

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

/** Triple HTTP: unary calls as POSTs of whole bodies (the arguments as a JSON array, or a protobuf message). */
export class TripleWeb implements WebWireMethod {
  constructor(
    private readonly codec: WebCodec,
    private readonly json: boolean,
    /** Server streams: Triple HTTP has none of its own in a browser; they go as Connect (the same server answers both). */
    private readonly streams: () => Promise<WebWireMethod>,
  ) {}

  async unary(args: readonly unknown[], call: FetchCall): Promise<unknown> {
    const headers: Record<string, string> = { ...call.headers, [H.contentType]: this.json ? "application/json" : "application/proto" };
    headers[H.triProtocolVersion] = TRI_PROTOCOL_VERSION;
    const ms = call.scope.remaining();
    if (ms !== undefined) headers[H.triServiceTimeout] = String(ms);
    const res = await send(call, "POST", call.url, headers, this.codec.encodeArgs(args));
    return this.codec.decodeResponse(await wholeBodyReply(res, call, this.json, codeFromHttpStatus));
  }

  async *serverStream(args: readonly unknown[], call: FetchCall): AsyncGenerator<unknown> {
    yield* (await this.streams()).serverStream(args, call);
  }
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
