// Owns `MessageReader`. Reads the length-prefixed messages of a gRPC stream, request or response:
// frames split across or packed into chunks any way, decompression per message, the receive limit
// before and after decompression. Must not change: gRPC's wire rules (5-byte message prefix,
// grpc-status in trailers) that grpc-js and other peers rely on.
import { Code } from "../protocol/code.js";
import type { Compression } from "../protocol/compression.js";
import { RpcError } from "../protocol/rpc-error.js";
import { FLAG_COMPRESSED, FrameDecoder } from "./framing.js";

/** Who receives the messages of a {@link MessageReader}. */
export interface MessageSink {
  /** One message (decompressed). Throwing ends the stream with that error. */
  onMessage(payload: Buffer): void;
  /** Called once: the stream ended, with an error when it was malformed or reset. */
  onMessagesEnd(err: RpcError | undefined): void;
  /** A response's end frame (Connect's end-stream message, gRPC-Web's trailers), as it arrived. */
  onEndFrame?(flags: number, payload: Buffer): void;
}

/**
 * Reads the length-prefixed messages of a gRPC stream, request or response: frames split across
 * or packed into chunks any way, decompression per message, the receive limit before and after
 * decompression. A chunk that holds whole frames (the usual case) is parsed in place; a
 * {@link FrameDecoder} only appears once a frame is split across chunks. Errors: a truncated
 * frame, a compressed message without a negotiated encoding, a message over the limit.
 *
 * The server feeds it through `Exchange.readBody` (it is a `BodySink`); the client from its
 * stream's 'data' events.
 */
export class MessageReader {
  private decoder: FrameDecoder | undefined = undefined;
  private done = false;

  constructor(
    private readonly maxBytes: number,
    /** The stream's `grpc-encoding`; the client learns it from the response headers. */
    public compression: Compression | undefined,
    private readonly sink: MessageSink,
    /** Flags that mark a response's end frame: 0x02 in Connect, 0x80 in gRPC-Web, none in gRPC. */
    private readonly endFlags = 0,
  ) {}

  /** True once the stream ended, failed or was abandoned. */
  get ended(): boolean {
    return this.done;
  }

  /** True when a frame has started but not finished. */
  get truncated(): boolean {
    return this.decoder?.pending ?? false;
  }

  /** Ends the stream with `err` (a body that cannot be framed at all, say), once. */
  fail(err: RpcError): void {
    this.finish(err);
  }

  /** Stops delivering messages. */
  abandon(): void {
    this.done = true;
  }

  onBodyEnd(): void {
    if (this.truncated) {
      this.finish(new RpcError(Code.Internal, "the stream ended in the middle of a message (truncated gRPC frame)"));
    } else {
      this.finish(undefined);
    }
  }

  onBodyError(): void {
    // A reset stream errors its body; whoever watches the stream's abort reports the cancellation.
    this.finish(new RpcError(Code.Cancelled, "the stream was reset"));
  }

  onBodyData(chunk: Buffer): void {
    if (this.done) return;
    try {
      if (this.decoder?.pending) {
        this.decoder.push(chunk, this);
        return;
      }
      // Whole frames in this chunk are handled in place; a partial one goes to the decoder.
      let off = 0;
      const n = chunk.length;
      while (n - off >= 5 && !this.done) {
        const flags = chunk[off];
        const len = chunk.readUInt32BE(off + 1);
        FrameDecoder.check(flags, len, this.maxBytes, this.endFlags);
        if (n - off - 5 < len) break;
        this.frame(flags, chunk.subarray(off + 5, off + 5 + len));
        off += 5 + len;
      }
      if (off < n && !this.done) {
        (this.decoder ??= new FrameDecoder(this.maxBytes, this.endFlags)).push(off === 0 ? chunk : chunk.subarray(off), this);
      }
    } catch (e) {
      this.finish(RpcError.from(e, Code.Internal));
    }
  }

  /** One complete frame (called by the decoder too). */
  frame(flags: number, data: Buffer): void {
    if (this.done) return;
    if ((flags & this.endFlags) !== 0) {
      // An end frame is never compressed in gRPC-Web and Connect's is JSON: hand it on as it is.
      this.sink.onEndFrame?.(flags, data);
      return;
    }
    this.sink.onMessage((flags & FLAG_COMPRESSED) !== 0 ? this.inflate(data) : data);
  }

  private finish(err: RpcError | undefined): void {
    if (this.done) return;
    this.done = true;
    this.sink.onMessagesEnd(err);
  }

  private inflate(data: Buffer): Buffer {
    if (!this.compression) {
      throw new RpcError(Code.Internal, "received a compressed message without a grpc-encoding (compressed flag set with identity encoding)");
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
