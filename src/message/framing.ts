/**
 * The 5-byte envelope gRPC, gRPC-Web, Connect streams and Triple over WebSocket share, the one
 * implementation for the server, the Node client and the web client: Buffers where Node.js has
 * them (the server's hot path reads straight off node's chunks), plain Uint8Arrays elsewhere.
 */
import { Code } from "../protocol/code.js";
import { messageTooLarge } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";

/**
 * gRPC's message framing ("Length-Prefixed-Message"): one flag byte (bit 0: compressed), a
 * 4-byte big-endian length, then the message. No Node.js module: `triple-rpc/web` uses it too.
 */

/** Allocates frame bytes: a Buffer under Node.js (what its sockets take), a Uint8Array in browsers. */
const alloc: (n: number) => Buffer = typeof Buffer === "function" ? (n) => Buffer.allocUnsafe(n) : (n) => new Uint8Array(n) as Buffer;

/** The 4-byte big-endian length at `at`. */
function lengthAt(b: Uint8Array, at: number): number {
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}

/** Flag bit of a compressed gRPC message. */
export const FLAG_COMPRESSED = 0x01;

/** Builds one length-prefixed gRPC frame. */
export function encodeFrame(payload: Uint8Array, compressed = false): Buffer {
  return envelope(compressed ? FLAG_COMPRESSED : 0, payload);
}

/** One message with any flags (a Connect end-stream message: 0x02) as the bytes of its envelope. */
export function envelope(flags: number, payload: Uint8Array): Buffer {
  const n = payload.length;
  const out = alloc(5 + n);
  out[0] = flags;
  out[1] = n >>> 24;
  out[2] = (n >>> 16) & 0xff;
  out[3] = (n >>> 8) & 0xff;
  out[4] = n & 0xff;
  out.set(payload, 5);
  return out;
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
        this.need = lengthAt(head, 1);
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
    const out = alloc(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0];
      const k = Math.min(c.length, n - off);
      out.set(k === c.length ? c : c.subarray(0, k), off);
      off += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return out;
  }
}

const EMPTY = alloc(0);

/** One envelope read back. */
export interface Envelope {
  readonly flags: number;
  readonly data: Uint8Array;
}

/**
 * Reads envelopes out of a body arriving in chunks of any size, for a caller that wants them as
 * a list (the web client's streamed responses). A declared length over `maxBytes` fails at once
 * (`resource_exhausted`), before its bytes are waited for; `extraFlags` as for {@link FrameDecoder}.
 */
export class EnvelopeReader implements FrameTarget {
  private readonly decoder: FrameDecoder;
  private out: Envelope[] = [];

  constructor(maxBytes: number, extraFlags: number) {
    this.decoder = new FrameDecoder(maxBytes, extraFlags);
  }

  /** Adds a chunk; returns the envelopes it completes, in order. */
  push(chunk: Uint8Array): Envelope[] {
    this.out = [];
    this.decoder.push(chunk as Buffer, this);
    return this.out;
  }

  frame(flags: number, data: Buffer): void {
    this.out.push({ flags, data });
  }

  /** True when the body ended inside an envelope. */
  get pending(): boolean {
    return this.decoder.pending;
  }
}
