// Owns `Download`, `downloadOf`. A file or stream a method returns as its response body (Triple
// HTTP): sent as it is read, with backpressure and without buffering, under `Content-Type`,
// `Content-Length` … Must not change: what a decorated class describes (paths, parameter order,
// tags): the wire depends on it.
import type * as Fs from "node:fs";
import type * as FsPromises from "node:fs/promises";
import type * as Path from "node:path";
import type { Readable } from "node:stream";
import type * as Stream from "node:stream";
import { nodeBuiltin, requireBuiltin } from "./node-builtin.js";
import { TYPE_KIND } from "./metadata.js";

/** What a download's bytes can come from. */
export type DownloadBody = Readable | ReadableStream<Uint8Array> | Blob | Uint8Array;

/** Options of a {@link Download}. */
export interface DownloadOptions {
  /** Sent as `Content-Disposition: attachment; filename=…` (RFC 6266, with a UTF-8 `filename*`). */
  filename?: string;
  /** `Content-Type`; default: the Blob's type, else `application/octet-stream`. */
  type?: string;
  /** `Content-Length` in bytes, when known (a Blob's and a Uint8Array's are). */
  size?: number;
  /** `Content-Disposition: inline` (shown by a browser) instead of `attachment`. */
  inline?: boolean;
}

/**
 * A file or stream a method returns as its response body (Triple HTTP): sent as it is read,
 * with backpressure and without buffering, under `Content-Type`, `Content-Length` (when the
 * size is known) and `Content-Disposition`. A method may also return a bare Node.js `Readable`,
 * a web `ReadableStream` or a `Blob`. Declare the method `@Method({ returns: Download })` so the
 * typed client streams the reply in as a `Download` (otherwise it reads it whole, within
 * `maxResponseBytes`). A `Download.file` returned by a GET route (`@Get`) answers single-range
 * `Range` requests (206, or 416 when unsatisfiable) and says `Accept-Ranges: bytes`.
 */
export class Download {
  /** The parameter or result type this class stands for (read by type-desc.ts). */
  static get [TYPE_KIND](): "download" {
    return "download";
  }
  readonly body: DownloadBody;
  readonly filename: string | undefined;
  readonly type: string | undefined;
  readonly size: number | undefined;
  readonly inline: boolean;
  /** The file of a {@link Download.file}: lets a GET route answer `Range` requests from it. */
  readonly path: string | undefined = undefined;
  /** The file's modification time, for a {@link Download.file}: its `Last-Modified` and `ETag`. */
  readonly modified: Date | undefined = undefined;

  constructor(body: DownloadBody, options: DownloadOptions = {}) {
    this.body = body;
    this.filename = options.filename;
    this.type = options.type ?? (isBlob(body) && body.type ? body.type : undefined);
    this.size = options.size ?? (isBlob(body) ? body.size : body instanceof Uint8Array ? body.byteLength : undefined);
    this.inline = options.inline === true;
  }

  /**
   * A file on disk: its size from `stat`, its base name as the default `filename`. A file that
   * cannot be read, or is not a regular file, fails with an error whose message names neither
   * the path nor the directory (the caller of the method sees it); its `cause` does, for the
   * server's log.
   */
  static async file(path: string, options: DownloadOptions = {}): Promise<Download> {
    const { stat } = requireBuiltin<typeof FsPromises>("node:fs/promises", "Download.file");
    const { createReadStream } = requireBuiltin<typeof Fs>("node:fs", "Download.file");
    const { basename } = requireBuiltin<typeof Path>("node:path", "Download.file");
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new Error(`Download.file: the file cannot be read${code ? ` (${code})` : ""}`, { cause: e });
    }
    if (!st.isFile()) throw new Error("Download.file: not a regular file", { cause: new Error(`${path} is not a regular file`) });
    // 64 KiB reads (node's default, what `createReadStream().pipe(res)` does): 256 KiB reads measured slower over HTTP/2 (0.72x vs 0.77-0.80x of the bare pipe).
    const d = new Download(createReadStream(path, { highWaterMark: 64 * 1024 }), { filename: basename(path), size: st.size, ...options });
    (d as { path: string | undefined }).path = path;
    (d as { modified: Date | undefined }).modified = st.mtime;
    return d;
  }

  /** The body as a Node.js Readable. */
  stream(): Readable {
    const { Readable } = requireBuiltin<typeof Stream>("node:stream", "Download.stream");
    const b = this.body;
    if (b instanceof Readable) return b;
    if (b instanceof Uint8Array) return Readable.from([b], { objectMode: false });
    if (isBlob(b)) return Readable.fromWeb(b.stream() as import("node:stream/web").ReadableStream<Uint8Array>);
    return Readable.fromWeb(b as import("node:stream/web").ReadableStream<Uint8Array>);
  }
}

/** A Node.js Readable (never, where there is no node:stream). */
function isReadable(x: unknown): boolean {
  const stream = nodeBuiltin<typeof Stream>("node:stream");
  return stream !== undefined && x instanceof stream.Readable;
}

function isBlob(x: unknown): x is Blob {
  return typeof Blob !== "undefined" && x instanceof Blob;
}

/**
 * The download a handler's result is, if it is one: a `Download`, a Node.js `Readable`, a web
 * `ReadableStream` or a `Blob`. Anything else is an ordinary (encoded) result.
 */
export function downloadOf(x: unknown): Download | undefined {
  if (x === null || typeof x !== "object") return undefined;
  if (x instanceof Download) return x;
  if (isReadable(x) || isBlob(x) || (typeof ReadableStream !== "undefined" && x instanceof ReadableStream)) {
    return new Download(x as DownloadBody);
  }
  return undefined;
}
