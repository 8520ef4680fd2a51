// Owns `CH`, `CONNECT_ACCEPT_ENCODING`, `CONNECT_FLAG_COMPRESSED`, `CONNECT_FLAG_END_STREAM`, …
// Connect's header names. Must not change: the Connect protocol's wire rules, as connect-es speaks
// them.
import { base64Decode, utf8Decode } from "../protocol/bytes.js";
import { Code, codeFromName } from "../protocol/code.js";
import type { MetadataValue } from "../protocol/headers.js";
import { type ErrorDetail, RpcError } from "../protocol/rpc-error.js";

/**
 * The rules of the Connect protocol that a client reads (connectrpc.com/docs/protocol): its
 * header names, the envelope flags, the error JSON and the end-stream message. Both clients read
 * them here (the Node client's Connect streams, the web client's), so it uses no Node.js API;
 * wire.ts re-exports them beside the rules only the server needs.
 */

/** Connect's header names. */
export const CH = {
  protocolVersion: "connect-protocol-version",
  timeoutMs: "connect-timeout-ms",
  contentEncoding: "connect-content-encoding",
  acceptEncoding: "connect-accept-encoding",
} as const;

/** The encodings a Connect stream accepts, for `connect-accept-encoding`. */
export const CONNECT_ACCEPT_ENCODING = "gzip,br,deflate";

/** Envelope flag of the end-stream message (JSON, always the last frame of a response); 0x01, a compressed message, is read by the shared framing. */
export const CONNECT_FLAG_END_STREAM = 0x02;

function base64Bytes(s: unknown): Uint8Array | undefined {
  if (typeof s !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(s)) return undefined;
  return base64Decode(s);
}

/**
 * Reads an error JSON object (a unary error body, or the `error` of an end-stream message).
 * Undefined when it is not one: no string `code` naming a known code, or malformed details.
 */
function errorFromConnectJson(v: unknown, metadata: Record<string, string | string[]>): RpcError | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const code = typeof o.code === "string" ? codeFromName(o.code) : undefined;
  if (code === undefined || code === Code.OK) return undefined;
  if (o.message !== undefined && o.message !== null && typeof o.message !== "string") return undefined;
  const details: ErrorDetail[] = [];
  if (Array.isArray(o.details)) {
    for (const d of o.details as Record<string, unknown>[]) {
      const value = d && typeof d.type === "string" ? base64Bytes(d.value) : undefined;
      if (!value) return undefined;
      details.push({ type: d.type as string, value });
    }
  }
  return new RpcError(code, (o.message as string | undefined) ?? "", { metadata, details });
}

/** Reads an end-stream message: its error (undefined on success) and its metadata (trailers). */
export function parseEndStream(bytes: Uint8Array): { error: RpcError | undefined; trailers: Record<string, MetadataValue> } {
  let v: unknown;
  try {
    v = JSON.parse(utf8Decode(bytes));
  } catch (e) {
    throw new RpcError(Code.Internal, `protocol error: the end-stream message is not JSON: ${(e as Error).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new RpcError(Code.Internal, "protocol error: the end-stream message is not a JSON object");
  }
  const o = v as { error?: unknown; metadata?: unknown };
  // One string per name, several values joined with ", ": the shape node's HTTP/2 gives gRPC's
  // trailers, so onTrailers sees the same on every protocol.
  const trailers: Record<string, string> = {};
  if (o.metadata && typeof o.metadata === "object") {
    for (const [k, vals] of Object.entries(o.metadata as Record<string, unknown>)) {
      if (Array.isArray(vals) && vals.length > 0) trailers[k.toLowerCase()] = vals.map(String).join(", ");
    }
  }
  if (o.error === undefined) return { error: undefined, trailers };
  const error = errorFromConnectJson(o.error, trailers);
  if (!error) throw new RpcError(Code.Internal, `protocol error: invalid error in the end-stream message: ${JSON.stringify(o.error).slice(0, 200)}`);
  return { error, trailers };
}
