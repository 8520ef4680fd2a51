import { Code } from "../protocol/code.js";
import { COMPRESS_MIN_BYTES, type Compression } from "../protocol/compression.js";
import { messageTooLarge } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";

/**
 * gRPC's message framing ("Length-Prefixed-Message"): one flag byte (bit 0: compressed), a
 * 4-byte big-endian length, then the message. Shared by the server and the client.
 */

/** Flag bit of a compressed gRPC message. */
export const FLAG_COMPRESSED = 0x01;

/** Builds one length-prefixed gRPC frame. */
export function encodeFrame(payload: Uint8Array, compressed = false): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.length);
  out[0] = compressed ? FLAG_COMPRESSED : 0;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

/** One request message as a frame, compressed with `compression` when it is at least 1 KiB. */
export function requestFrame(payload: Uint8Array, compression: Compression | undefined): Buffer {
  const compress = compression !== undefined && payload.byteLength >= COMPRESS_MIN_BYTES;
  return encodeFrame(compress ? compression.compress(payload) : payload, compress);
}

/** Receives the frames a {@link FrameDecoder} completes. */
export interface FrameTarget {
  frame(flags: number, data: Buffer): void;
}

/**
 * Incremental decoder for 5-byte length-prefixed frames that may be split across, or packed
 * into, chunks in any way. Rejects frames over `maxBytes` as soon as their header is seen, so a
 * hostile length never makes us buffer.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private need = -1; // payload length of the frame in progress; -1 while reading a header
  private flags = 0;

  constructor(
    private readonly maxBytes: number,
    /** Flag bits besides "compressed" a frame may carry (a response's end frame in Connect and gRPC-Web). */
    private readonly extraFlags = 0,
  ) {}

  /** Throws when a frame header is bad: unknown flag bits, or a length over the limit. */
  static check(flags: number, length: number, maxBytes: number, extraFlags = 0): void {
    if ((flags & ~(FLAG_COMPRESSED | extraFlags)) !== 0) {
      const allowed = extraFlags ? `0x01 and 0x${extraFlags.toString(16)}` : "0x01 (compressed)";
      throw new RpcError(Code.Internal, `invalid message frame flags 0x${flags.toString(16)}: only ${allowed} may be set`);
    }
    if (length > maxBytes) {
      throw messageTooLarge(length, maxBytes);
    }
  }

  /** Feeds a chunk; hands each frame it completes to `target`, in order. */
  push(chunk: Buffer, target: FrameTarget): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 5) break;
        const head = this.take(5);
        this.flags = head[0];
        this.need = head.readUInt32BE(1);
        FrameDecoder.check(this.flags, this.need, this.maxBytes, this.extraFlags);
      }
      if (this.buffered < this.need) break;
      const data = this.take(this.need);
      this.need = -1;
      target.frame(this.flags, data);
    }
  }

  /** True when a frame has started but not finished: the stream ended mid-message. */
  get pending(): boolean {
    return this.need >= 0 || this.buffered > 0;
  }

  private take(n: number): Buffer {
    if (n === 0) return EMPTY;
    const first = this.chunks[0];
    if (first.length >= n) {
      this.buffered -= n;
      if (first.length === n) {
        this.chunks.shift();
        return first;
      }
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0];
      const k = Math.min(c.length, n - off);
      c.copy(out, off, 0, k);
      off += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return out;
  }
}

const EMPTY = Buffer.alloc(0);
