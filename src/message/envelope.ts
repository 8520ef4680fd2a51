import { concatBytes } from "../protocol/bytes.js";
import { messageTooLarge } from "../protocol/errors.js";

/**
 * gRPC's length-prefixed message (the envelope that gRPC, gRPC-Web and Connect streams share):
 * one flags byte, a 4-byte big-endian length, the payload. This is the form of it that runs on
 * any runtime (Uint8Array only), for the web client (`triple-rpc/web`); the server and the Node
 * client frame with framing.ts, which works on Buffers and reads straight off node's chunks.
 */

/** One message with its flags, as the bytes of its envelope. */
export function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/** One envelope read back. */
export interface Envelope {
  readonly flags: number;
  readonly data: Uint8Array;
}

/**
 * Reads envelopes out of a body arriving in chunks of any size. A declared length over
 * `maxBytes` fails at once (`resource_exhausted`), before its bytes are waited for.
 */
export class EnvelopeReader {
  private buffered: Uint8Array = new Uint8Array(0);

  constructor(private readonly maxBytes: number) {}

  /** Adds a chunk; returns the envelopes it completes, in order. */
  push(chunk: Uint8Array): Envelope[] {
    let b = this.buffered.length === 0 ? chunk : concatBytes([this.buffered, chunk]);
    const out: Envelope[] = [];
    while (b.length >= 5) {
      const n = new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(1);
      if (n > this.maxBytes) throw messageTooLarge(n, this.maxBytes);
      if (b.length < 5 + n) break;
      out.push({ flags: b[0], data: b.subarray(5, 5 + n) });
      b = b.subarray(5 + n);
    }
    this.buffered = b;
    return out;
  }

  /** The bytes of an incomplete envelope left at the end of the body (0 when it ended cleanly). */
  get pending(): number {
    return this.buffered.length;
  }
}
