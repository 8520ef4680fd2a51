import * as protobuf from "protobufjs";
import type { Code } from "./code.js";
import type { ErrorDetail } from "./rpc-error.js";
import { RpcError } from "./rpc-error.js";

/**
 * gRPC status on the wire (PROTOCOL-HTTP2 "Responses"): `grpc-status`, percent-encoded
 * `grpc-message` and `grpc-status-details-bin` (a google.rpc.Status). Pure functions, no I/O.
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

/**
 * Decodes `grpc-message` leniently: valid `%XX` sequences are decoded as UTF-8 bytes, anything
 * else (a raw message from Dubbo Java, a stray `%`) is kept as it is.
 */
export function decodeGrpcMessage(value: string): string {
  if (!value.includes("%")) return value;
  // Runs of escapes decode together so multi-byte UTF-8 sequences come out whole.
  return value.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ""), "hex").toString("utf8"));
}

function typeUrl(type: string): string {
  return type.includes("/") ? type : `type.googleapis.com/${type}`;
}

/** Encodes a google.rpc.Status { code = 1, message = 2, details = 3 (google.protobuf.Any) }. */
export function encodeStatusDetails(code: Code, message: string, details: readonly ErrorDetail[]): Buffer {
  const w = protobuf.Writer.create();
  if (code !== 0) w.uint32(8).int32(code);
  if (message) w.uint32(18).string(message);
  for (const d of details) {
    w.uint32(26).fork();
    w.uint32(10).string(typeUrl(d.type));
    if (d.value.length > 0) w.uint32(18).bytes(d.value);
    w.ldelim();
  }
  const b = w.finish();
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** Decodes a google.rpc.Status; throws on malformed input. */
export function decodeStatusDetails(bytes: Uint8Array): { code: number; message: string; details: ErrorDetail[] } {
  const r = protobuf.Reader.create(bytes);
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
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64").replace(/=+$/, "");
}

/** The status headers of an error (or of success when `err` is undefined), to merge into trailers. */
export function statusHeaders(err: RpcError | undefined, target: Record<string, string | string[] | number>): void {
  if (!err) {
    target["grpc-status"] = "0";
    return;
  }
  for (const k in err.metadata) target[k] = err.metadata[k];
  target["grpc-status"] = String(err.code);
  if (err.message) target["grpc-message"] = encodeGrpcMessage(err.message);
  if (err.details.length > 0) {
    target["grpc-status-details-bin"] = toUnpaddedBase64(encodeStatusDetails(err.code, err.message, err.details));
  }
}
