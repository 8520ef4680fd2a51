// Owns `contentDisposition`, `parseRange`, `ifRangeHolds`, `DownloadSender`. `Content-Disposition`
// for a file name (RFC 6266): an ASCII `filename` fallback and a UTF-8 `filename*`. Must not
// change: Triple's wire rules as Dubbo Java speaks them (tri-* headers, the HTTP unary and stream
// forms).
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { H } from "../protocol/headers.js";
import type { Download } from "../service/download.js";
import type { AbortSink, Exchange, OutHeaders } from "../transport/server/exchange.js";

/** `Content-Disposition` for a file name (RFC 6266): an ASCII `filename` fallback and a UTF-8 `filename*`. */
function contentDisposition(filename: string | undefined, inline: boolean): string {
  const kind = inline ? "inline" : "attachment";
  if (filename === undefined || filename === "") return kind;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const utf8 = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return ascii === filename ? `${kind}; filename="${ascii}"` : `${kind}; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

/** A single `bytes=` range of a `size`-byte file, inclusive; undefined to ignore it; "unsatisfiable". */
function parseRange(value: string, size: number): { start: number; end: number } | "unsatisfiable" | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(value.trim());
  if (!m || (m[1] === "" && m[2] === "")) return undefined; // several ranges, other units: the whole file
  if (m[1] === "") {
    const n = Number(m[2]);
    return n === 0 || size === 0 ? "unsatisfiable" : { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return "unsatisfiable";
  return start > end ? undefined : { start, end };
}

/**
 * Whether a request's `If-Range` lets its `Range` apply (RFC 9110 §13.1.5): only when it names
 * the file as it is now, by its entity tag (strong comparison: a weak tag never matches) or by
 * exactly its `Last-Modified` date, a date that is a strong validator (the file is at least a
 * second older than the answer). Anything else means the whole file, 200.
 */
function ifRangeHolds(value: unknown, etag: string, lastModified: string, modifiedMs: number): boolean {
  if (value === undefined) return true;
  if (typeof value !== "string") return false;
  const v = value.trim();
  if (v.startsWith('"') || v.startsWith("W/")) return v === etag;
  return v === lastModified && Date.now() - modifiedMs >= 1000;
}

/**
 * The status and source of a download: a file returned to a GET (or HEAD) request says its
 * `Last-Modified` and `ETag` (size and modification time, in hex, as nginx writes it) and answers
 * a single `Range` (206 with `Content-Range`, or 416) unless an `If-Range` names another version;
 * anything else is the whole body (200).
 */
function ranged(ex: Exchange, d: Download, headers: OutHeaders): { status: number; source: Readable } {
  const size = d.size;
  const modified = d.modified?.getTime();
  if ((ex.method !== "GET" && ex.method !== "HEAD") || d.path === undefined || size === undefined || modified === undefined) {
    return { status: 200, source: d.stream() };
  }
  headers["accept-ranges"] = "bytes";
  const etag = `"${modified.toString(16)}-${size.toString(16)}"`;
  const lastModified = new Date(modified).toUTCString();
  headers.etag = etag;
  headers["last-modified"] = lastModified;
  const header = ex.headers.range;
  const wanted = typeof header === "string" && ifRangeHolds(ex.headers["if-range"], etag, lastModified, modified);
  const range = wanted ? parseRange(header, size) : undefined;
  if (range === undefined) return { status: 200, source: d.stream() };
  d.stream().destroy();
  if (range === "unsatisfiable") {
    headers[H.contentLength] = 0;
    headers["content-range"] = `bytes */${size}`;
    return { status: 416, source: Readable.from([]) };
  }
  headers[H.contentLength] = range.end - range.start + 1;
  headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
  return { status: 206, source: createReadStream(d.path, { start: range.start, end: range.end, highWaterMark: 64 * 1024 }) };
}

/**
 * Sends a {@link Download} as the response body: headers first, then the bytes as the source
 * yields them, pausing it while the peer is slow (no buffering beyond the streams' own
 * high-water marks). A source that fails midway resets the exchange (the client sees a cut
 * response, never a truncated "success"); a peer that goes away destroys the source.
 * `done` is called once, when the body ended or failed.
 */
export class DownloadSender implements AbortSink {
  private readonly source: Readable;
  private over = false;

  constructor(
    private readonly ex: Exchange,
    download: Download,
    headers: OutHeaders,
    private readonly done: (err: Error | undefined) => void,
  ) {
    headers[H.contentType] = download.type ?? "application/octet-stream";
    if (download.size !== undefined) headers[H.contentLength] = download.size;
    headers["content-disposition"] = contentDisposition(download.filename, download.inline);
    headers["x-content-type-options"] = "nosniff";
    const { status, source } = ranged(ex, download, headers);
    this.source = source;
    ex.onAbort(this);
    ex.start(status, headers, false);
    source.on("data", (chunk: Buffer) => this.onData(chunk));
    source.on("end", () => this.finish(undefined));
    source.on("error", (e) => this.finish(e));
  }

  private onData(chunk: Buffer): void {
    if (this.over) return;
    if (!this.ex.write(chunk)) {
      this.source.pause();
      this.ex.onDrain(() => this.source.resume());
    }
  }

  private finish(err: Error | undefined): void {
    if (this.over) return;
    this.over = true;
    if (err) this.ex.reset();
    else this.ex.end();
    this.done(err);
  }

  onExchangeAbort(): void {
    if (this.over) return;
    this.over = true;
    this.source.destroy();
    this.done(new Error("the client went away during the download"));
  }
}
