import * as http2 from "node:http2";
import { after, before } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";

/** A raw gRPC exchange as seen on the wire: headers, concatenated DATA, trailers. */
export interface RawReply {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  data: Buffer;
  /** The length-prefixed messages of `data`. */
  messages: { flags: number; payload: Buffer }[];
  /** grpc-status from the trailers, or from the headers of a trailers-only response. */
  grpcStatus: number | undefined;
  grpcMessage: string | undefined;
}

/** Builds one length-prefixed frame by hand. */
export function frame(payload: Uint8Array | string, flags = 0): Buffer {
  const p = typeof payload === "string" ? Buffer.from(payload) : Buffer.from(payload);
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(p.length, 1);
  return Buffer.concat([h, p]);
}

function parseMessages(data: Buffer): RawReply["messages"] {
  const out: RawReply["messages"] = [];
  let off = 0;
  while (off + 5 <= data.length) {
    const len = data.readUInt32BE(off + 1);
    out.push({ flags: data[off], payload: data.subarray(off + 5, off + 5 + len) });
    off += 5 + len;
  }
  return out;
}

/**
 * Sends `chunks` as separate DATA writes (so frames split across chunk boundaries exactly as
 * given), then END_STREAM unless `end` is false, and collects the reply.
 */
export function rawCall(session: http2.ClientHttp2Session, path: string, chunks: Buffer[], headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    let status = 0;
    let head: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const data: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      head = h;
    });
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (c: Buffer) => data.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      const body = Buffer.concat(data);
      const src = trailers["grpc-status"] !== undefined ? trailers : head;
      resolve({
        status,
        headers: head,
        trailers,
        data: body,
        messages: parseMessages(body),
        grpcStatus: src["grpc-status"] === undefined ? undefined : Number(src["grpc-status"]),
        grpcMessage: src["grpc-message"] as string | undefined,
      });
    });
    (async () => {
      for (const c of chunks) {
        stream.write(c);
        // Let each chunk go out as its own DATA frame.
        await new Promise((r) => setImmediate(r));
      }
      stream.end();
    })().catch(reject);
  });
}

/**
 * Serves `services` on a fresh server for the enclosing `describe` (node:test `before`/`after`)
 * with one raw HTTP/2 session to it; read `server` and `session` inside the tests.
 */
export function servedSession(services: () => object[]): { readonly server: TripleServer; readonly session: http2.ClientHttp2Session } {
  const s = {} as { server: TripleServer; session: http2.ClientHttp2Session };
  before(async () => {
    s.server = createServer({ services: services() });
    await s.server.listen({ port: 0 });
    s.session = http2.connect(s.server.url);
    s.session.on("error", () => {});
  });
  after(async () => {
    s.session.close();
    await s.server.close();
  });
  return s;
}
