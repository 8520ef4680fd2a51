// Owns `BodyCollector`, `boundedBodyStream`. Reads a whole request body, at most `limit` bytes, and
// reports once. An object pushed to by the exchange's shared listeners: no promise and no closure
// per call. Must not change: Triple's wire rules as Dubbo Java speaks them (tri-* headers, the HTTP
// unary and stream forms).
import type { Readable, Writable } from "node:stream";
import { boundedDecompressStream, ByteLimit, type Compression } from "../protocol/compression.js";
import { bodyTooLarge, requestBodyClosed } from "../protocol/errors.js";
import type { RpcError } from "../protocol/rpc-error.js";
import type { BodySink, Exchange } from "../transport/server/exchange.js";

const EMPTY = Buffer.alloc(0);

/** Receives a whole request body, or why there is none, from a {@link BodyCollector}. */
export interface BodyTarget {
  onBody(err: RpcError | undefined, data: Buffer): void;
}

/**
 * Reads a whole request body, at most `limit` bytes, and reports once. An object pushed to by
 * the exchange's shared listeners: no promise and no closure per call; a one-chunk body (the
 * common case) is not copied. A reset or aborted request ends it with `cancelled` (the
 * exchange's abort sink hears of it too).
 */
export class BodyCollector implements BodySink {
  private first: Buffer | undefined = undefined;
  private chunks: Buffer[] | undefined = undefined;
  private size = 0;
  private done = false;

  constructor(
    private readonly ex: Exchange,
    private readonly limit: number,
    private readonly target: BodyTarget,
  ) {
    ex.readBody(this);
  }

  onBodyData(chunk: Buffer): void {
    if (this.done) return;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.ex.body.pause();
      this.finish(bodyTooLarge(this.limit), EMPTY);
      return;
    }
    if (this.first === undefined) this.first = chunk;
    else (this.chunks ??= [this.first]).push(chunk);
  }

  onBodyEnd(): void {
    this.finish(undefined, this.chunks ? Buffer.concat(this.chunks, this.size) : (this.first ?? EMPTY));
  }

  onBodyError(): void {
    this.finish(requestBodyClosed(), EMPTY);
  }

  private finish(err: RpcError | undefined, data: Buffer): void {
    if (this.done) return;
    this.done = true;
    this.first = this.chunks = undefined;
    this.target.onBody(err, data);
  }
}

/** A request body handed to a codec as a stream, and how to stop reading it. */
export interface BodyStream {
  readonly stream: Readable;
  /** Stops reading: the request body is unpiped (left to `Exchange.discardBody`) and inflation stops. */
  detach(): void;
}

/**
 * The request body as a stream for codecs that read it themselves (multipart), decompressed, and
 * bounded twice by `maxBytes`: the bytes received and the bytes inflated from them. The first
 * chunk past either limit fails the stream with resource_exhausted (413) and stops the zlib
 * stream; nothing past it is read or inflated. The body is read through `Exchange.readBody`
 * (pausing it while the codec is behind), so the transport sees its bytes arrive and can
 * enforce the minimum body rate.
 */
export function boundedBodyStream(ex: Exchange, compression: Compression | undefined, maxBytes: number): BodyStream {
  const raw = new ByteLimit(maxBytes, () => bodyTooLarge(maxBytes));
  const inflate = compression ? boundedDecompressStream(compression, maxBytes) : undefined;
  const stream = inflate ? inflate.output : raw;
  if (inflate) {
    raw.on("error", (e) => inflate.output.destroy(e));
    inflate.output.on("close", () => raw.destroy());
    raw.pipe(inflate.input);
  }
  const feed = new BodyFeed(ex, raw);
  raw.on("drain", () => feed.detached || ex.body.resume());
  ex.readBody(feed);
  return {
    stream,
    detach() {
      feed.detached = true;
      raw.destroy();
      stream.destroy();
      // A body paused for the codec would stay paused (and fill its windows): let it flow into the inert feed.
      ex.body.resume();
    },
  };
}

/** Pushes a request body into a writable, pausing the body while the writable is full; inert once detached. */
class BodyFeed implements BodySink {
  detached = false;

  constructor(
    private readonly ex: Exchange,
    private readonly into: Writable,
  ) {}

  onBodyData(chunk: Buffer): void {
    if (this.detached || this.into.destroyed) return;
    if (!this.into.write(chunk)) this.ex.body.pause();
  }

  onBodyEnd(): void {
    if (!this.detached && !this.into.destroyed) this.into.end();
  }

  onBodyError(): void {
    if (!this.detached) this.into.destroy(requestBodyClosed());
  }
}
