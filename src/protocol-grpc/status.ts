// Owns `encodeGrpcMessage`, `decodeGrpcMessage`, `encodeStatusDetails`, `decodeStatusDetails`, …
// Percent-encodes a status message as gRPC asks: every byte of the UTF-8 text outside printable
// ASCII (0x20–0x7E), and `%` itself, becomes `%XX`. Must not change: gRPC's wire rules (5-byte
// message prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import { protobufjs } from "../codec/protobufjs-runtime.js";
import { asBuffer } from "../codec/bytes.js";
import { isBadRequestType, truncateBadRequest } from "../protocol/bad-request.js";
import { Code, isCode } from "../protocol/code.js";
import { firstHeader, H, type HeaderMap, metadataOf } from "../protocol/headers.js";
import { type ErrorDetail, RpcError } from "../protocol/rpc-error.js";
import { boundMessage } from "../protocol/wire-text.js";
import { base64Decode, utf8Decode } from "../protocol/bytes.js";

/**
 * gRPC status on the wire (gRPC's PROTOCOL-HTTP2, "Responses"): `grpc-status`, percent-encoded
 * `grpc-message` and `grpc-status-details-bin` (a google.rpc.Status), in the trailers or, when
 * the call ends before any message, in a trailers-only HEADERS frame. Both sides' rules live here.
 */

const HEX = "0123456789ABCDEF";

/**
 * Percent-encodes a status message as gRPC asks: every byte of the UTF-8 text outside printable
 * ASCII (0x20–0x7E), and `%` itself, becomes `%XX`. The common all-ASCII case returns the input.
 */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  const bytes = Buffer.from(message, "utf8");
  let out = "";
  for (const b of bytes) {
    if (b >= 0x20 && b <= 0x7e && b !== 0x25) out += String.fromCharCode(b);
    else out += `%${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

/** The bytes of hex text (`%XX` runs of grpc-message). */
function hexDecode(s: string): Uint8Array {
  const out = new Uint8Array(s.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * Decodes `grpc-message` leniently: valid `%XX` sequences are decoded as UTF-8 bytes, anything
 * else (a raw message from Dubbo Java, a stray `%`) is kept as it is.
 */
export function decodeGrpcMessage(value: string): string {
  if (!value.includes("%")) return value;
  // Runs of escapes decode together so multi-byte UTF-8 sequences come out whole.
  return value.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => utf8Decode(hexDecode(run.replace(/%/g, ""))));
}

function typeUrl(type: string): string {
  return type.includes("/") ? type : `type.googleapis.com/${type}`;
}

/** Encodes a google.rpc.Status { code = 1, message = 2, details = 3 (google.protobuf.Any) }. */
export function encodeStatusDetails(code: Code, message: string, details: readonly ErrorDetail[]): Buffer {
  const w = protobufjs.Writer.create();
  if (code !== 0) w.uint32(8).int32(code);
  if (message) w.uint32(18).string(message);
  for (const d of details) {
    w.uint32(26).fork();
    w.uint32(10).string(typeUrl(d.type));
    if (d.value.length > 0) w.uint32(18).bytes(d.value);
    w.ldelim();
  }
  return asBuffer(w.finish());
}

/** Decodes a google.rpc.Status; throws on malformed input. */
export function decodeStatusDetails(bytes: Uint8Array): { code: number; message: string; details: ErrorDetail[] } {
  const r = protobufjs.Reader.create(bytes);
  let code = 0;
  let message = "";
  const details: ErrorDetail[] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        code = r.int32();
        break;
      case 2:
        message = r.string();
        break;
      case 3: {
        const end = r.uint32() + r.pos;
        let type = "";
        let value: Uint8Array = new Uint8Array(0);
        while (r.pos < end) {
          const t = r.uint32();
          if (t >>> 3 === 1) type = r.string();
          else if (t >>> 3 === 2) value = r.bytes();
          else r.skipType(t & 7);
        }
        details.push({ type, value });
        break;
      }
      default:
        r.skipType(tag & 7);
    }
  }
  return { code, message, details };
}

/** Base64 without padding, as gRPC recommends for `-bin` values. */
export function toUnpaddedBase64(bytes: Uint8Array): string {
  return asBuffer(bytes).toString("base64").replace(/=+$/, "");
}

/**
 * The most bytes of the google.rpc.Status a server writes in `grpc-status-details-bin` (before
 * base64). With the message's 1 KiB (`boundMessage`) the status stays under 8 KiB of headers,
 * the smallest limit common gRPC clients put on a response's header list (grpc-java's default
 * `maxInboundMetadataSize`, gRPC core's `grpc.max_metadata_size`).
 */
export const MAX_STATUS_DETAILS_BYTES = 4096;

/**
 * The details that fit in `budget` bytes, in order: a detail too large for what is left is
 * dropped, except a `google.rpc.BadRequest`, which keeps the field violations that fit.
 */
function boundedDetails(details: readonly ErrorDetail[], budget: number): readonly ErrorDetail[] {
  let size = 0;
  for (const d of details) size += d.value.length + d.type.length + 32;
  if (size <= budget) return details;
  const out: ErrorDetail[] = [];
  let left = budget;
  for (const d of details) {
    const overhead = typeUrl(d.type).length + 12; // the Any's tags and lengths
    const kept = d.value.length + overhead <= left ? d : isBadRequestType(d.type) ? truncateBadRequest(d, left - overhead) : undefined;
    if (kept === undefined) continue;
    out.push(kept);
    left -= kept.value.length + overhead;
  }
  return out;
}

/**
 * The status headers of an error (or of success when `err` is undefined), to merge into
 * trailers: the message cut to 1 KiB, the details to {@link MAX_STATUS_DETAILS_BYTES}.
 */
export function statusHeaders(err: RpcError | undefined, target: Record<string, string | string[] | number>): void {
  if (!err) {
    target[H.grpcStatus] = "0";
    return;
  }
  for (const k in err.metadata) target[k] = err.metadata[k];
  target[H.grpcStatus] = String(err.code);
  const message = boundMessage(err.message);
  if (message) target[H.grpcMessage] = encodeGrpcMessage(message);
  if (err.details.length > 0) {
    const details = boundedDetails(err.details, MAX_STATUS_DETAILS_BYTES - Buffer.byteLength(message) - 16);
    if (details.length > 0) target[H.grpcStatusDetailsBin] = toUnpaddedBase64(encodeStatusDetails(err.code, message, details));
  }
}

/**
 * The outcome carried by gRPC trailers (or a trailers-only HEADERS frame): undefined for OK,
 * else an RpcError with the code, the decoded message, details and the trailers as metadata.
 */
export function errorFromGrpcTrailers(trailers: HeaderMap): RpcError | undefined {
  const raw = firstHeader(trailers, H.grpcStatus);
  if (raw === undefined) return new RpcError(Code.Internal, "protocol error: the response has no grpc-status");
  // A status is ASCII digits; anything else (empty, "0x0", "+0") is not a success.
  if (!/^\d+$/.test(raw)) return new RpcError(Code.Unknown, `protocol error: invalid grpc-status "${raw}"`);
  const status = Number(raw);
  if (status === 0) return undefined;
  const code = isCode(status) ? status : Code.Unknown;
  const message = decodeGrpcMessage(firstHeader(trailers, H.grpcMessage) ?? "");
  let details: ErrorDetail[] = [];
  const bin = firstHeader(trailers, H.grpcStatusDetailsBin);
  if (bin) {
    try {
      // Type URLs arrive as `type.googleapis.com/<name>`; callers match on the name.
      details = decodeStatusDetails(base64Decode(bin)).details.map((d) => ({
        type: d.type.slice(d.type.lastIndexOf("/") + 1),
        value: d.value,
      }));
    } catch {
      // Undecodable details do not hide the status itself.
    }
  }
  return new RpcError(code, message, { metadata: metadataOf(trailers), details });
}
