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
