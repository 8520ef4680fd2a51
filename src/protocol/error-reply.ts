// Owns `errorFromHttpResponse`. Turns a non-200 Triple HTTP response into an RpcError. Must not
// change: the code and status tables and error shapes every protocol shares.
import { base64Decode, utf8Decode } from "./bytes.js";
import { Code, codeFromName, isCode } from "./code.js";
import { type HeaderMap, metadataOf } from "./headers.js";
import { type ErrorDetail, RpcError } from "./rpc-error.js";
import { codeFromHttpStatus, codeFromLegacyStatus } from "./status-table.js";

/**
 * Reading the JSON error body of an HTTP reply (Triple HTTP and Connect unary), in every dialect
 * of the Dubbo world. Both clients read it here: the Node client's Triple and Connect unary
 * calls, and the web client's (`triple-rpc/web`), so it uses no Node.js API.
 */

function parseBody(body: Uint8Array): { parsed: unknown; text: string } {
  if (body.length === 0) return { parsed: undefined, text: "" };
  try {
    return { parsed: JSON.parse(utf8Decode(body)), text: "" };
  } catch {
    // not JSON: a proxy's HTML page or plain text; keep a short excerpt as the message
    return { parsed: undefined, text: utf8Decode(body.subarray(0, 512)).trim() };
  }
}

/**
 * The code an error body names, in any of the dialects: our `code` name, dubbo-go's `code`
 * number, Dubbo Java's `status` as an HTTP status string, dubbo-js's `status` as a gRPC code, a
 * legacy Dubbo status (trusted only where the HTTP status says nothing, since 70 covers several
 * codes). `fromHttp` is the code the HTTP status alone gives.
 */
function codeOfBody(b: Record<string, unknown>, fromHttp: Code, legacyStatus: number | undefined): Code {
  const named = typeof b.code === "string" ? codeFromName(b.code) : isCode(b.code) ? b.code : undefined;
  const s = b.status;
  if (named !== undefined) return named;
  if (typeof s === "string" && /^\d{3}$/.test(s)) return codeFromHttpStatus(Number(s));
  if (typeof s === "number" && legacyStatus === undefined && isCode(s)) return s;
  if (typeof s === "number" && legacyStatus !== undefined && fromHttp === Code.Unknown) {
    return codeFromLegacyStatus(s) ?? fromHttp;
  }
  return fromHttp;
}

/**
 * Turns a non-200 Triple HTTP response into an RpcError. Reads our body (`{status, message,
 * code}`) and the other dialects of the Dubbo world: `status` as an HTTP status string (Dubbo
 * Java), `status` as a gRPC code number (dubbo-js), `code` alone (dubbo-go). Without a usable
 * body the HTTP status decides (400 invalid_argument, 401 unauthenticated, 403
 * permission_denied, 404 unimplemented, 408 deadline_exceeded, 409 aborted, 412
 * failed_precondition, 413/431 resource_exhausted, 415 internal, 429/502/503/504 unavailable,
 * anything else unknown).
 */
export function errorFromHttpResponse(
  status: number,
  headers: HeaderMap,
  body: Uint8Array,
  /** The code of a status without a usable body: Triple's table, or gRPC's for Connect replies. */
  fromHttp: (status: number) => Code = codeFromHttpStatus,
): RpcError {
  let code = fromHttp(status);
  let legacyStatus: number | undefined;
  const { parsed, text } = parseBody(body);
  let message = text;
  let details: ErrorDetail[] = [];
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const b = parsed as Record<string, unknown>;
    if (typeof b.message === "string") message = b.message;
    // A Dubbo legacy status: one that the legacy table maps (status-table.ts, the one list of them).
    if (typeof b.status === "number" && codeFromLegacyStatus(b.status) !== undefined) legacyStatus = b.status;
    code = codeOfBody(b, code, legacyStatus);
    details = detailsOf(b.details);
  } else if (typeof parsed === "string") {
    message = parsed;
  }
  if (!message) message = `HTTP status ${status}`;
  return new RpcError(code, message, { metadata: metadataOf(headers), httpStatus: status, legacyStatus, details });
}

/** Error details as Connect, dubbo-js and our Triple body write them: `[{type, value: base64}]`; malformed ones are dropped. */
function detailsOf(v: unknown): ErrorDetail[] {
  if (!Array.isArray(v)) return [];
  const out: ErrorDetail[] = [];
  for (const d of v as Record<string, unknown>[]) {
    if (d && typeof d.type === "string" && typeof d.value === "string" && /^[A-Za-z0-9+/_-]*={0,2}$/.test(d.value)) {
      out.push({ type: d.type, value: base64Decode(d.value) });
    }
  }
  return out;
}
