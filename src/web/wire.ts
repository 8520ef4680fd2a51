// Owns `codecOf`, `send`, `envelopes`, `TripleWeb`, … A method's codec: an IDL-less method's JSON
// without loading anything. Must not change: no node: import and no server code: it runs in
// browsers (the bundle budget test checks).
import { needsConverterExtras } from "../codec/converters.js";
import { type JsonClientCodec, jsonClientCodec } from "../codec/json-message.js";
import { Code } from "../protocol/code.js";
import { errorFromHttpResponse } from "../protocol/error-reply.js";
import { H, metadataOf, TRAILER_PREFIX, TRI_PROTOCOL_VERSION, trailersOf } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { codeFromHttpStatus } from "../protocol/status-table.js";
import type { CallOptions } from "../runtime/call-options.js";
import type { MethodDescriptor } from "../service/descriptors.js";
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
    // A result of a Java value class or an upload: its codec and their converters, loaded together.
    if (md.returns && needsConverterExtras(md.returns)) return (await import("./java-results.js")).javaResultCodec(md);
    return jsonClientCodec(md);
  }
  const { messageCodec } = await import("../message/method-codec.js");
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
export async function wholeBodyReply(res: Response, call: FetchCall, json: boolean, fromHttp: (s: number) => Code): Promise<Uint8Array> {
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
 * Triple HTTP: unary calls as POSTs of whole bodies (the arguments as a JSON array, or a protobuf
 * message). Connect (connect.ts) and gRPC-Web (grpc-web.ts) are loaded by a dynamic import on the
 * first call that uses them.
 */
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
