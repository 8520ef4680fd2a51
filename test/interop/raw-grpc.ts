import * as http2 from "node:http2";
import * as path from "node:path";
import * as zlib from "node:zlib";
import * as protobuf from "protobufjs";
import { INTEROP_PROTO_DIR } from "./grpc-js-clients.js";

/** test.proto's messages, loaded on their own (independent of the server's loader). */
const messages = (() => {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(INTEROP_PROTO_DIR, path.basename(target));
  root.loadSync("test.proto", { keepCase: true });
  return root;
})();

/** Encodes a grpc.testing message by its short name. */
export function encode(type: string, value: object): Buffer {
  const t = messages.lookupType(`grpc.testing.${type}`);
  return Buffer.from(t.encode(t.fromObject(value)).finish());
}

/** Decodes a grpc.testing message by its short name. */
export function decode(type: string, bytes: Uint8Array): any {
  return messages.lookupType(`grpc.testing.${type}`).toObject(messages.lookupType(`grpc.testing.${type}`).decode(bytes), {
    defaults: true,
  });
}

/** One length-prefixed gRPC message, written by hand (so tests can also write wrong ones). */
export function frame(payload: Uint8Array, flags = 0, declaredLength = payload.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(declaredLength, 1);
  return Buffer.concat([head, payload]);
}

/** A frame as read off the wire: its flag byte and its (still compressed, if flagged) bytes. */
export interface RawFrame {
  flags: number;
  data: Buffer;
}

/** Splits a whole response body into frames; throws on a torn frame. */
function parseFrames(body: Buffer): RawFrame[] {
  const out: RawFrame[] = [];
  let i = 0;
  while (i < body.length) {
    if (body.length - i < 5) throw new Error(`torn frame header at ${i}`);
    const len = body.readUInt32BE(i + 1);
    if (body.length - i - 5 < len) throw new Error(`torn frame at ${i}: ${len} bytes declared`);
    out.push({ flags: body[i], data: body.subarray(i + 5, i + 5 + len) });
    i += 5 + len;
  }
  return out;
}

/** The message bytes of a frame, inflated per `encoding` when its compressed flag is set. */
export function unframe(f: RawFrame, encoding: string | undefined): Buffer {
  if ((f.flags & 1) === 0) return f.data;
  if (encoding === "gzip") return zlib.gunzipSync(f.data);
  if (encoding === "deflate") return zlib.inflateSync(f.data);
  throw new Error(`compressed frame with grpc-encoding ${encoding}`);
}

/** What a raw gRPC call got back. */
export interface RawReply {
  headers: http2.IncomingHttpHeaders;
  /** Trailers, or for a trailers-only response the headers again. */
  trailers: http2.IncomingHttpHeaders;
  frames: RawFrame[];
  /** grpc-status from the trailers (or trailers-only headers), as a number; NaN if absent. */
  status: number;
  /** grpc-message, percent-decoded. */
  message: string;
}

/**
 * One gRPC call on a raw node:http2 session: sends `body` exactly as given (so it may be
 * malformed) and collects headers, frames and trailers.
 */
export function rawCall(session: http2.ClientHttp2Session, path_: string, body: Buffer | Buffer[], headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path_,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let resHeaders: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on("response", (h) => (resHeaders = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      const t = trailers ?? resHeaders;
      const raw = t["grpc-status"];
      resolve({
        headers: resHeaders,
        trailers: t,
        frames: parseFrames(Buffer.concat(chunks)),
        status: raw === undefined ? Number.NaN : Number(raw),
        message: decodeURIComponent(String(t["grpc-message"] ?? "")),
      });
    });
    for (const b of Array.isArray(body) ? body : [body]) stream.write(b);
    stream.end();
  });
}
