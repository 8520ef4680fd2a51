import type { Readable } from "node:stream";
import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { FLAG_COMPRESSED, FrameDecoder } from "../protocol/grpc-framing.js";
import { RpcError } from "../protocol/rpc-error.js";

/**
 * Reads the length-prefixed messages of a gRPC request body: frames split across or packed into
 * chunks any way, decompression per message, the receive limit before and after decompression.
 * `onMessage` gets each payload; `onEnd` is called once, with an error when the body was
 * malformed (a truncated frame, a compressed message without `grpc-encoding`, too large).
 */
export class GrpcReader {
  private readonly decoder: FrameDecoder;
  private done = false;

  constructor(
    private readonly body: Readable,
    private readonly maxBytes: number,
    private readonly compression: Compression | undefined,
    private readonly onMessage: (payload: Buffer) => void,
    private readonly onEnd: (err: RpcError | undefined) => void,
  ) {
    this.decoder = new FrameDecoder(maxBytes);
    body.on("data", (chunk: Buffer) => this.onData(chunk));
    body.on("end", () => {
      if (this.decoder.pending) {
        this.finish(new RpcError(Code.Internal, "the request ended in the middle of a message (truncated gRPC frame)"));
      } else {
        this.finish(undefined);
      }
    });
    // A reset stream errors its body; the exchange's abort handler reports the cancellation.
    body.on("error", () => this.finish(new RpcError(Code.Cancelled, "the request stream was reset")));
  }

  /** True once the body ended, failed or was abandoned. */
  get ended(): boolean {
    return this.done;
  }

  /** Stops reading for now (backpressure: the handler is behind). */
  pause(): void {
    if (!this.done) this.body.pause();
  }

  resume(): void {
    if (!this.done) this.body.resume();
  }

  /** Stops delivering messages; what is left of the body is the exchange's to discard. */
  abandon(): void {
    this.done = true;
    this.body.resume();
  }

  private finish(err: RpcError | undefined): void {
    if (this.done) return;
    this.done = true;
    this.onEnd(err);
  }

  private onData(chunk: Buffer): void {
    if (this.done) return;
    try {
      const frames = this.decoder.push(chunk);
      for (let i = 0; i < frames.length && !this.done; i++) {
        const f = frames[i];
        this.onMessage((f.flags & FLAG_COMPRESSED) !== 0 ? this.inflate(f.data) : f.data);
      }
    } catch (e) {
      this.finish(RpcError.from(e, Code.Internal));
    }
  }

  private inflate(data: Buffer): Buffer {
    if (!this.compression) {
      throw new RpcError(
        Code.Internal,
        "received a compressed message but the request has no grpc-encoding (compressed flag set with identity encoding)",
      );
    }
    try {
      return this.compression.decompress(data, this.maxBytes);
    } catch (e) {
      const err = RpcError.from(e, Code.Internal);
      // Corrupt compressed data is a broken message (internal), not a bad argument.
      if (err.code === Code.InvalidArgument) throw new RpcError(Code.Internal, err.message, { cause: e });
      throw err;
    }
  }
}
