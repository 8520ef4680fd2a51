// Owns `GRPC_WEB_FLAG_TRAILERS`, `GRPC_WEB_MEDIA_TYPES`, `grpcWebFormatOf`, `isGrpcWebContentType`,
// … Flag of the trailer frame. Must not change: gRPC-Web's wire rules (trailers as a flagged frame
// in the body) that grpc-web clients rely on.
import { base64Decode, concatBytes, latin1Decode } from "../protocol/bytes.js";
import { statusHeaders } from "../protocol-grpc/status.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { BodySink } from "../transport/server/exchange.js";

/**
 * gRPC-Web (grpc/grpc PROTOCOL-WEB): gRPC's framing over any HTTP version, with the trailers
 * sent as the body's last frame (flag 0x80, an HTTP/1-style header block), and a text mode whose
 * bodies are base64.
 */

/** Flag of the trailer frame. */
export const GRPC_WEB_FLAG_TRAILERS = 0x80;

/** How a gRPC-Web call's messages are encoded, and whether the bodies are base64 text. */
export interface GrpcWebFormat {
  readonly format: "proto" | "json";
  readonly text: boolean;
}

const FORMATS: ReadonlyMap<string, GrpcWebFormat> = new Map([
  ["application/grpc-web", { format: "proto", text: false }],
  ["application/grpc-web+proto", { format: "proto", text: false }],
  ["application/grpc-web+json", { format: "json", text: false }],
  ["application/grpc-web-text", { format: "proto", text: true }],
  ["application/grpc-web-text+proto", { format: "proto", text: true }],
] as const);

/** The gRPC-Web media types we accept, for error messages. */
export const GRPC_WEB_MEDIA_TYPES: readonly string[] = [...FORMATS.keys()];

/** The format of a (lower-case, parameter-free) gRPC-Web media type. */
export function grpcWebFormatOf(mediaType: string): GrpcWebFormat | undefined {
  return FORMATS.get(mediaType);
}

/** True when a Content-Type selects gRPC-Web (a prefix check, run before anything is parsed). */
export function isGrpcWebContentType(contentType: unknown): boolean {
  return typeof contentType === "string" && contentType.startsWith("application/grpc-web");
}

/** The trailer frame of a call's outcome: `grpc-status`, `grpc-message`, details and trailers, lower-case. */
export function trailerFrame(err: RpcError | undefined, trailers: Record<string, unknown> | undefined): Buffer {
  const t: Record<string, string | string[] | number> = {};
  if (trailers) Object.assign(t, trailers);
  statusHeaders(err, t);
  let block = "";
  for (const k in t) {
    const v = t[k];
    const name = k.toLowerCase();
    if (Array.isArray(v)) for (const x of v) block += `${name}: ${x}\r\n`;
    else block += `${name}: ${v}\r\n`;
  }
  const payload = Buffer.from(block, "latin1");
  const out = Buffer.allocUnsafe(5 + payload.length);
  out[0] = GRPC_WEB_FLAG_TRAILERS;
  out.writeUInt32BE(payload.length, 1);
  payload.copy(out, 5);
  return out;
}

/**
 * Reads a trailer frame's header block into lower-case names; a repeated name's values are joined
 * with ", " (as node's HTTP/2 joins gRPC's trailers, so onTrailers sees one shape everywhere).
 */
export function parseTrailerBlock(payload: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of latin1Decode(payload).split("\r\n")) {
    const i = line.indexOf(":");
    if (i <= 0) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    const v = line.slice(i + 1).trim();
    const prev = out[k];
    out[k] = prev === undefined ? v : `${prev}, ${v}`;
  }
  return out;
}

/** Decodes base64 text whose padded groups may be concatenated (each flushed chunk padded on its own). */
export function decodeBase64Chunks(s: string): Buffer {
  // base64Decode and concatBytes give Buffers on Node; the web client reads text bodies here too.
  const B = (x: string) => base64Decode(x) as Buffer;
  let start = 0;
  const parts: Buffer[] = [];
  for (let i = 3; i < s.length; i += 4) {
    if (s.charCodeAt(i) === 61 /* = */) {
      parts.push(B(s.slice(start, i + 1)));
      start = i + 1;
    }
  }
  if (start < s.length) parts.push(B(s.slice(start)));
  return (parts.length === 1 ? parts[0] : concatBytes(parts)) as Buffer;
}

const NOT_BASE64 = /[^A-Za-z0-9+/=_-]/;

/**
 * A body sink that base64-decodes gRPC-Web text before handing the bytes on: whole 4-character
 * groups as they arrive, the rest with the next chunk.
 */
export class Base64BodySink implements BodySink {
  private rest = "";
  private failed = false;

  constructor(private readonly next: BodySink & { fail(err: RpcError): void }) {}

  onBodyData(chunk: Buffer): void {
    if (this.failed) return;
    const s = this.rest + chunk.toString("latin1").replace(/[\r\n\t ]/g, "");
    if (NOT_BASE64.test(s)) {
      this.failed = true;
      this.next.fail(new RpcError(Code.Internal, "the gRPC-Web text body is not base64 (application/grpc-web-text bodies are base64-encoded frames)"));
      return;
    }
    const whole = s.length - (s.length % 4);
    this.rest = s.slice(whole);
    if (whole > 0) this.next.onBodyData(decodeBase64Chunks(s.slice(0, whole)));
  }

  onBodyEnd(): void {
    if (this.failed) return;
    if (this.rest) this.next.onBodyData(Buffer.from(this.rest, "base64"));
    this.rest = "";
    this.next.onBodyEnd();
  }

  onBodyError(): void {
    this.next.onBodyError();
  }
}
