// Owns `isConnectGet`, `connectGetRequest`. A GET is a Connect call when its query says so:
// `connect=v1` (Connect) or `triple=…` (dubbo-js). Must not change: the Connect protocol's wire
// rules, as connect-es speaks them.
import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { RpcError } from "../protocol/rpc-error.js";
import { type ConnectFormat, connectCompressionOf } from "./wire.js";

/** A GET is a Connect call when its query says so: `connect=v1` (Connect) or `triple=…` (dubbo-js). */
export function isConnectGet(query: string | undefined): boolean {
  return query !== undefined && (query.includes("connect=v1") || query.includes("triple=") || query.includes("message="));
}

/** What a Connect GET's query carries. */
export interface ConnectGetRequest {
  readonly format: ConnectFormat;
  readonly compression: Compression | undefined;
  readonly message: Buffer;
}

/**
 * Reads a Connect GET query: `encoding` (json or proto, required), `message` (percent-encoded
 * UTF-8, or URL-safe base64 with `base64=1`, which binary messages and compressed ones need),
 * `compression`, and `connect=v1`. Parameters come in any order; unknown ones are ignored.
 */
export function connectGetRequest(query: string, maxBytes: number): ConnectGetRequest {
  const q = new URLSearchParams(query);
  const connect = q.get("connect");
  if (connect !== null && connect !== "v1") {
    throw new RpcError(Code.InvalidArgument, `unsupported connect=${connect} in the query: this server speaks v1`);
  }
  const encoding = q.get("encoding");
  if (encoding !== "json" && encoding !== "proto") {
    throw new RpcError(
      Code.Unimplemented,
      encoding === null
        ? "missing encoding in the GET query: add encoding=json or encoding=proto"
        : `unsupported encoding=${encoding} in the GET query; use json or proto`,
      { httpStatus: 415 },
    );
  }
  const compression = connectCompressionOf(q.get("compression") ?? undefined, "compression");
  const raw = q.get("message") ?? "";
  const base64 = q.get("base64") === "1";
  if (!base64 && (compression || encoding === "proto") && raw !== "") {
    throw new RpcError(Code.InvalidArgument, "a binary or compressed GET message must be base64: add base64=1 and encode the message as URL-safe base64");
  }
  if (base64 && !/^[A-Za-z0-9_\-+/]*={0,2}$/.test(raw)) {
    throw new RpcError(Code.InvalidArgument, "the GET message is not base64 although base64=1 says it is");
  }
  const message = base64 ? Buffer.from(raw, "base64") : Buffer.from(raw, "utf8");
  if (message.length > maxBytes) {
    throw new RpcError(Code.ResourceExhausted, `the GET message is ${message.length} bytes, over the limit of ${maxBytes}`);
  }
  return { format: encoding, compression, message };
}
