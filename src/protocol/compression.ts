// Owns `ByteLimit`, `boundedDecompressStream`, `HTTP_COMPRESSIONS`, `GRPC_COMPRESSIONS`, … Passes
// bytes through while their running total stays within `max`; the chunk that takes it past fails
// the stream with `tooLarge()` and nothing more goes through. Must not change: the code and status
// tables and error shapes every protocol shares.
import { type Readable, Transform, type TransformCallback, type Writable } from "node:stream";
import * as zlib from "node:zlib";
import { Code } from "./code.js";
import { decompressedTooLarge } from "./errors.js";
import { firstHeader, H, type HeaderMap } from "./headers.js";
import { RpcError } from "./rpc-error.js";

/** A compression algorithm as named in Content-Encoding / grpc-encoding. */
export interface Compression {
  readonly name: string;
  compress(data: Uint8Array): Buffer;
  /**
   * Decompresses, refusing output beyond `maxBytes` with resource_exhausted (413). zlib inflates
   * in chunks and stops at the first chunk past the limit (`maxOutputLength`): a bomb costs the
   * CPU of `maxBytes` of output, never of its whole content.
   */
  decompress(data: Uint8Array, maxBytes: number): Buffer;
  /** A streaming decompressor (unbounded: see {@link boundedDecompressStream}). */
  createDecompressStream(): Transform;
}

function corrupt(name: string, e: unknown): RpcError {
  return new RpcError(Code.InvalidArgument, `invalid ${name} data: ${(e as Error).message}`, { cause: e, legacyStatus: 25 });
}

function inflateWith(fn: (d: Uint8Array, o: zlib.ZlibOptions & zlib.BrotliOptions) => Buffer, name: string): Compression["decompress"] {
  return (data, maxBytes) => {
    let out: Buffer;
    try {
      // maxOutputLength makes a decompression bomb fail fast instead of filling memory (zlib
      // needs at least 1, so a zero limit is checked after).
      out = fn(data, { maxOutputLength: Math.max(1, maxBytes) });
    } catch (e) {
      if (e instanceof RangeError || (e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
        throw decompressedTooLarge(maxBytes);
      }
      throw corrupt(name, e);
    }
    if (out.length > maxBytes) throw decompressedTooLarge(maxBytes);
    return out;
  };
}

const gzip: Compression = {
  name: "gzip",
  compress: (d) => zlib.gzipSync(d, { level: 6 }),
  decompress: inflateWith(zlib.gunzipSync, "gzip"),
  createDecompressStream: () => zlib.createGunzip(),
};
const deflate: Compression = {
  name: "deflate",
  compress: (d) => zlib.deflateSync(d),
  decompress: inflateWith(zlib.inflateSync, "deflate"),
  createDecompressStream: () => zlib.createInflate(),
};
const br: Compression = {
  name: "br",
  // Quality 4 is far cheaper than the default 11 and still beats gzip on most bodies.
  compress: (d) => zlib.brotliCompressSync(d, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }),
  decompress: inflateWith(zlib.brotliDecompressSync, "br"),
  createDecompressStream: () => zlib.createBrotliDecompress(),
};

/**
 * Passes bytes through while their running total stays within `max`; the chunk that takes it
 * past fails the stream with `tooLarge()` and nothing more goes through.
 */
export class ByteLimit extends Transform {
  private total = 0;

  constructor(
    private readonly max: number,
    private readonly tooLarge: () => RpcError,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.total += chunk.length;
    if (this.total > this.max) done(this.tooLarge());
    else done(null, chunk);
  }
}

/**
 * A streaming decompressor whose output is bounded: write compressed bytes to `input`, read at
 * most `maxBytes` from `output`. The chunk that takes the output past the limit fails `output`
 * with resource_exhausted (413) and destroys the zlib stream, which stops inflating at once (zlib
 * streams inflate one output chunk at a time and respect back-pressure, so a bomb costs about
 * `maxBytes` of work, not its whole content). Corrupt data fails it with invalid_argument (400).
 */
export function boundedDecompressStream(c: Compression, maxBytes: number): { input: Writable; output: Readable } {
  const z = c.createDecompressStream();
  const output = new ByteLimit(maxBytes, () => decompressedTooLarge(maxBytes));
  z.on("error", (e) => output.destroy(e instanceof RpcError ? e : corrupt(c.name, e)));
  // Over the limit, or abandoned by its reader: stop inflating now.
  output.on("close", () => z.destroy());
  z.pipe(output);
  return { input: z, output };
}

/** Content-Encoding values accepted on HTTP unary calls. */
export const HTTP_COMPRESSIONS: ReadonlyMap<string, Compression> = new Map([
  ["gzip", gzip],
  ["x-gzip", gzip],
  ["deflate", deflate],
  ["br", br],
]);

/** grpc-encoding values accepted on gRPC calls (identity handled by callers). */
export const GRPC_COMPRESSIONS: ReadonlyMap<string, Compression> = new Map([
  ["gzip", gzip],
  ["deflate", deflate],
]);

/** Our grpc-accept-encoding value. */
export const GRPC_ACCEPT_ENCODING = "gzip,deflate,identity";
/** The Accept-Encoding list we send and accept on HTTP unary calls. */
export const HTTP_ACCEPT_ENCODING = "gzip, deflate, br";

/** Responses smaller than this are not worth compressing. */
export const COMPRESS_MIN_BYTES = 1024;

/**
 * Picks a response compression from an Accept-Encoding header: highest q first, ties broken by
 * our preference (gzip, br, deflate). Undefined when none of ours is acceptable.
 */
export function negotiateEncoding(acceptEncoding: string | undefined, supported: ReadonlyMap<string, Compression>): Compression | undefined {
  if (!acceptEncoding) return undefined;
  let best: Compression | undefined;
  let bestQ = 0;
  let bestRank = 99;
  for (const part of acceptEncoding.split(",")) {
    const [rawName, ...params] = part.split(";");
    const name = rawName.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split("=");
      if (k.trim() === "q") q = Number(v);
    }
    if (!(q > 0)) continue;
    const c = supported.get(name);
    if (!c) continue;
    const rank = name === "gzip" ? 0 : name === "br" ? 1 : 2;
    if (q > bestQ || (q === bestQ && rank < bestRank)) {
      best = c;
      bestQ = q;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * A whole HTTP response body, compressed with the best encoding the request's Accept-Encoding
 * allows when it is worth it (at least {@link COMPRESS_MIN_BYTES}; the header is read only then),
 * `Content-Encoding` set in `headers`; as it is otherwise. Triple HTTP and Connect unary replies
 * and the HTTP error bodies use it.
 */
export function compressResponseBody(body: Buffer | string, requestHeaders: HeaderMap, headers: Record<string, string | number | string[]>): Buffer | string {
  if (body.length < COMPRESS_MIN_BYTES) return body;
  const c = negotiateEncoding(firstHeader(requestHeaders, H.acceptEncoding), HTTP_COMPRESSIONS);
  if (!c) return body;
  headers["content-encoding"] = c.name;
  return c.compress(typeof body === "string" ? Buffer.from(body) : body);
}
