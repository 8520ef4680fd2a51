// Owns `FileUpload`. An uploaded file that streams: declare a parameter (or a `@Field`) of this
// type to receive a multipart file part without holding it in memory. Must not change: what a
// decorated class describes (paths, parameter order, tags): the wire depends on it.
import type * as Fs from "node:fs";
import type * as FsPromises from "node:fs/promises";
import type { Readable } from "node:stream";
import type * as Stream from "node:stream";
import { requireBuiltin } from "./node-builtin.js";
import { TYPE_KIND } from "./metadata.js";

/** Where a {@link StreamedFile}'s bytes are: in memory, in a temp file, or still arriving. */
export type StreamedFileSource =
  | { readonly kind: "memory"; readonly data: Buffer }
  | { readonly kind: "disk"; readonly path: string }
  | { readonly kind: "live"; readonly stream: Readable };

/**
 * An uploaded file that streams: declare a parameter (or a `@Field`) of this type to receive a
 * multipart file part without holding it in memory; `StreamedFile[]` receives every part of its name.
 *
 * - Parts up to `uploads.memoryBytes` (default 1 MiB) stay in memory; larger ones are
 *   written to a temp file (`path`, mode 0600, an unguessable name in the server's `uploads.dir`)
 *   that is deleted when the call ends, however it ends. Read it during the call.
 * - When the method's LAST parameter is a named (`@Param("file")`) single `StreamedFile`, or the
 *   method's only parameter, the handler starts as soon as that part's headers arrive, and
 *   `stream()` is the part itself as it streams in (with backpressure: the upload advances as fast
 *   as the handler reads). `path` is then undefined and `size` grows as bytes are read. Parts
 *   after it are not bound.
 *
 * `stream()` is a Node.js `Readable` (use `Readable.toWeb()` for a web stream).
 */
export class StreamedFile {
  /** The parameter or result type this class stands for (read by type-desc.ts). */
  static get [TYPE_KIND](): "upload" {
    return "upload";
  }
  /** The part's `filename` (base name only; "" without one). Never use it as a path unchecked. */
  readonly filename: string;
  /** The part's media type (`application/octet-stream` when it has none). */
  readonly contentType: string;
  /** Bytes received: the full size, except for a file still streaming in (then the bytes so far). */
  size: number;
  /** The temp file holding the bytes, when the part was spilled to disk; undefined otherwise. */
  readonly path: string | undefined;
  private readonly source: StreamedFileSource;
  private streamed = false;

  /** Use the static factories; the shape of `source` is internal. */
  constructor(filename: string, contentType: string, size: number, source: StreamedFileSource) {
    this.filename = filename;
    this.contentType = contentType;
    this.size = size;
    this.source = source;
    this.path = source.kind === "disk" ? source.path : undefined;
  }

  /** A file held in memory. */
  static fromBytes(data: Uint8Array, filename = "", contentType = "application/octet-stream"): StreamedFile {
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return new StreamedFile(filename, contentType, buf.length, { kind: "memory", data: buf });
  }

  /** A file spilled to `path` (the server's temp file; it owns and deletes it). */
  static fromPath(path: string, size: number, filename: string, contentType: string): StreamedFile {
    return new StreamedFile(filename, contentType, size, { kind: "disk", path });
  }

  /** A file still streaming in: `stream` is the part; `size` is updated as it flows. */
  static fromStream(stream: Readable, filename: string, contentType: string): StreamedFile {
    const f = new StreamedFile(filename, contentType, 0, { kind: "live", stream });
    return f;
  }

  /** True when the bytes are still arriving (the handler started before the upload ended). */
  get streaming(): boolean {
    return this.source.kind === "live";
  }

  /**
   * The file's bytes as a Node.js Readable. In memory or on disk it can be called again for a
   * fresh stream; a file still streaming in has one stream, and a second call throws.
   */
  stream(): Readable {
    const s = this.source;
    if (s.kind === "memory") return requireBuiltin<typeof Stream>("node:stream", "StreamedFile.stream").Readable.from([s.data], { objectMode: false });
    if (s.kind === "disk") return requireBuiltin<typeof Fs>("node:fs", "StreamedFile.stream").createReadStream(s.path);
    if (this.streamed) throw new Error(`StreamedFile "${this.filename}" is streaming in and its stream() was already taken`);
    this.streamed = true;
    return s.stream;
  }

  /** The whole file in memory: meant for small files (a spilled or streaming file is read whole). */
  async bytes(): Promise<Uint8Array> {
    const s = this.source;
    if (s.kind === "memory") return s.data;
    if (s.kind === "disk") return requireBuiltin<typeof FsPromises>("node:fs/promises", "StreamedFile.bytes").readFile(s.path);
    const chunks: Buffer[] = [];
    for await (const c of this.stream()) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  /** The file decoded as UTF-8 text (small files). */
  async text(): Promise<string> {
    return Buffer.from(await this.bytes()).toString("utf8");
  }
}
