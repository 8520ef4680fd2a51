import * as http from "node:http";
import * as http2 from "node:http2";
import { gunzipSync } from "node:zlib";
import type { Reply } from "../helpers/http.js";

/** One enveloped message: flags, then the payload. */
export interface Envelope {
  flags: number;
  data: Buffer;
}

/** Frames a message: flags (1 byte), big-endian length (4 bytes), the bytes. */
export function envelope(flags: number, data: Buffer | string): Buffer {
  const b = typeof data === "string" ? Buffer.from(data) : data;
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(b.length, 1);
  return Buffer.concat([head, b]);
}

/** Splits a body into its envelopes (throws on a truncated one). */
export function envelopes(body: Buffer): Envelope[] {
  const out: Envelope[] = [];
  let i = 0;
  while (i < body.length) {
    if (body.length - i < 5) throw new Error(`truncated envelope header at ${i}`);
    const len = body.readUInt32BE(i + 1);
    if (body.length - i - 5 < len) throw new Error(`truncated envelope at ${i}`);
    out.push({ flags: body[i], data: body.subarray(i + 5, i + 5 + len) });
    i += 5 + len;
  }
  return out;
}

/** The payload of an envelope, gunzipped when its compressed bit (0x01) is set. */
export function payload(e: Envelope): Buffer {
  return e.flags & 0x01 ? gunzipSync(e.data) : e.data;
}

/** GreetRequest { name } in protobuf: field 1, length-delimited. */
export function greetRequestProto(name: string): Buffer {
  const n = Buffer.from(name);
  return Buffer.concat([Buffer.from([0x0a, n.length]), n]);
}

/** GreetResponse { greeting } from protobuf bytes (field 1 only). */
export function greetingOfProto(b: Buffer): string {
  if (b.length === 0) return "";
  if (b[0] !== 0x0a) throw new Error(`unexpected tag ${b[0]}`);
  return b.subarray(2, 2 + b[1]).toString();
}

function toReply(status: number, headers: Reply["headers"], body: Buffer): Reply {
  return { status, headers, body, json: () => JSON.parse(body.toString("utf8")), text: () => body.toString("utf8") };
}

/**
 * An HTTP/1.1 request whose body is written but (with `open`) never ended: the server has to
 * answer on its own (a deadline); the request is destroyed once the answer is complete.
 */
export function request1(
  url: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | string; open?: boolean },
): Promise<Reply> {
  const u = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method ?? "POST", headers: init.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          resolve(toReply(res.statusCode ?? 0, res.headers, Buffer.concat(chunks)));
          if (init.open) req.destroy();
        });
        res.on("error", reject);
      },
    );
    req.on("error", (e) => {
      if (!init.open) reject(e);
    });
    if (init.open) {
      req.flushHeaders();
      if (init.body !== undefined) req.write(init.body);
    } else req.end(init.body);
  });
}

/** Like {@link request1} over HTTP/2 (h2c prior knowledge), on a session of its own. */
export function request2(
  url: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | string | (Buffer | string)[]; open?: boolean },
): Promise<Reply & { chunks: Buffer[] }> {
  const session = http2.connect(url);
  session.on("error", () => {});
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":method": init.method ?? "POST", ":path": path, ...init.headers }, { endStream: false });
    let status = 0;
    let headers: Reply["headers"] = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h as Reply["headers"];
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      resolve({ ...toReply(status, headers, Buffer.concat(chunks)), chunks });
      stream.close();
      session.close();
    });
    stream.on("error", (e) => {
      session.close();
      reject(e);
    });
    for (const piece of Array.isArray(init.body) ? init.body : init.body === undefined ? [] : [init.body]) stream.write(piece);
    if (!init.open) stream.end();
  });
}

/** What a {@link recordingProxy} saw of one exchange. */
export interface Seen {
  method: string;
  url: string;
  requestHeaders: http.IncomingHttpHeaders;
  status?: number;
  responseHeaders?: http.IncomingHttpHeaders;
}

/** A pass-through HTTP/1.1 proxy in front of `target` that records every exchange. */
export function recordingProxy(target: string, seen: Seen[]): Promise<http.Server> {
  const t = new URL(target);
  const s = http.createServer((req, res) => {
    const row: Seen = { method: req.method ?? "", url: req.url ?? "", requestHeaders: req.headers };
    seen.push(row);
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      row.status = r.statusCode;
      row.responseHeaders = r.headers;
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}
