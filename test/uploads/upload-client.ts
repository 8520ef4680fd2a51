import { createHash, randomBytes } from "node:crypto";
import * as http from "node:http";
import * as http2 from "node:http2";
import { Readable } from "node:stream";

export const BOUNDARY = "----tripleUploadBoundary9aQ2";
export const MiB = 1024 * 1024;

/** A block of random bytes repeated to make large files quickly. */
const BLOCK = randomBytes(256 * 1024);

interface FieldSpec {
  name: string;
  value: string;
}

/** A file generated on the fly: `size` bytes of a repeated random block. */
interface FileSpec {
  name: string;
  filename?: string;
  contentType?: string;
  size: number;
}

export interface UploadSpec {
  fields?: FieldSpec[];
  /** Parts before the fields (order matters for handlers that start early). */
  filesFirst?: boolean;
  files: FileSpec[];
  /** Extra raw bytes after the last part (before the closing boundary): `undefined` for none. */
  boundary?: string;
  /** Stop after this many body bytes (a truncated body: the request is then ended or left open). */
  truncateAt?: number;
  /** Stop sending after this many body bytes but keep the request open (a stalled client). */
  stallAt?: number;
}

function head(name: string, filename: string | undefined, type: string | undefined, boundary: string): Buffer {
  let h = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"`;
  if (filename !== undefined) h += `; filename="${filename}"`;
  h += "\r\n";
  if (type) h += `Content-Type: ${type}\r\n`;
  return Buffer.from(`${h}\r\n`);
}

/** The file bytes of a generated file, chunk by chunk. */
function* fileChunks(size: number): Generator<Buffer> {
  let left = size;
  while (left > 0) {
    const n = Math.min(left, BLOCK.length);
    yield n === BLOCK.length ? BLOCK : BLOCK.subarray(0, n);
    left -= n;
  }
}

/** SHA-256 of a generated file of `size` bytes. */
export function sha256Of(size: number): string {
  const h = createHash("sha256");
  for (const c of fileChunks(size)) h.update(c);
  return h.digest("hex");
}

/** The whole multipart body of `spec`, as a lazily generated sequence of chunks. */
function* bodyChunks(spec: UploadSpec): Generator<Buffer> {
  const b = spec.boundary ?? BOUNDARY;
  const fields = function* () {
    for (const f of spec.fields ?? []) {
      yield head(f.name, undefined, undefined, b);
      yield Buffer.from(`${f.value}\r\n`);
    }
  };
  if (!spec.filesFirst) yield* fields();
  for (const f of spec.files) {
    yield head(f.name, f.filename, f.contentType ?? "application/octet-stream", b);
    yield* fileChunks(f.size);
    yield Buffer.from("\r\n");
  }
  if (spec.filesFirst) yield* fields();
  yield Buffer.from(`--${b}--\r\n`);
}

/** The body as a Readable (with backpressure), cut at `truncateAt`, or stalled at `stallAt`, when set. */
function bodyStream(spec: UploadSpec, onProgress?: (sent: number) => void): Readable {
  const limit = Math.min(spec.truncateAt ?? Number.POSITIVE_INFINITY, spec.stallAt ?? Number.POSITIVE_INFINITY);
  const it = bodyChunks(spec);
  let sent = 0;
  return new Readable({
    read() {
      for (;;) {
        if (sent >= limit) {
          // Stalled: never push again (the request stays open); truncated: end early.
          if (spec.stallAt === undefined) this.push(null);
          return;
        }
        const r = it.next();
        if (r.done) {
          this.push(null);
          return;
        }
        const c = r.value;
        const part = sent + c.length > limit ? c.subarray(0, limit - sent) : c;
        sent += part.length;
        onProgress?.(sent);
        if (this.destroyed || !this.push(part)) return;
      }
    },
  });
}

export function contentType(boundary = BOUNDARY): string {
  return `multipart/form-data; boundary=${boundary}`;
}

export interface Answer {
  status: number;
  body: string;
  headers: Record<string, unknown>;
  /** Body bytes sent when the response arrived. */
  sentAtAnswer: number;
}

export interface SendOptions {
  headers?: Record<string, string>;
  /** Called with the bytes sent so far; may abort by returning "abort". */
  onProgress?: (sent: number) => undefined | "abort";
  /** Aborting it destroys the request (the client goes away). */
  signal?: AbortSignal;
}

/** Streams an upload over HTTP/1.1 (chunked); resolves with the answer, rejects when the request fails. */
export function upload1(url: string, path: string, spec: UploadSpec, opts: SendOptions = {}): Promise<Answer> {
  const u = new URL(path, url);
  return new Promise((resolve, reject) => {
    let sent = 0;
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      method: "POST",
      agent: false,
      headers: { "content-type": contentType(spec.boundary), ...opts.headers },
    });
    const body = bodyStream(spec, (n) => {
      sent = n;
      if (opts.onProgress?.(n) === "abort") {
        body.destroy();
        req.destroy(new Error("aborted by the test"));
      }
    });
    req.on("response", (res) => {
      const at = sent;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers, sentAtAnswer: at }));
      res.on("error", reject);
    });
    req.on("error", reject);
    opts.signal?.addEventListener("abort", () => req.destroy(new Error("aborted by the test")));
    body.pipe(req);
  });
}

/** Streams an upload over HTTP/2 (h2c); same contract as {@link upload1}. */
export function upload2(url: string, path: string, spec: UploadSpec, opts: SendOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    let sent = 0;
    const req = session.request({ ":method": "POST", ":path": path, "content-type": contentType(spec.boundary), ...opts.headers });
    const body = bodyStream(spec, (n) => {
      sent = n;
      if (opts.onProgress?.(n) === "abort") {
        body.destroy();
        req.close(http2.constants.NGHTTP2_CANCEL);
      }
    });
    let status = 0;
    let headers: Record<string, unknown> = {};
    let at = 0;
    const chunks: Buffer[] = [];
    req.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h;
      at = sent;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      if (status === 0) reject(new Error("the stream ended without a response"));
      else resolve({ status, body: Buffer.concat(chunks).toString(), headers, sentAtAnswer: at });
    });
    req.on("error", (e) => {
      session.close();
      reject(e);
    });
    req.on("close", () => {
      session.close();
      if (status === 0) reject(new Error(`stream closed with code ${req.rstCode}`));
    });
    opts.signal?.addEventListener("abort", () => {
      req.close(http2.constants.NGHTTP2_CANCEL);
      session.destroy();
    });
    body.pipe(req);
  });
}
