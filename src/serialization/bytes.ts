// Owns `ByteWriter`, `ByteCursor`. An output buffer that doubles as it fills. Must not change: the
// Java-compatible encodings (the Java interop tests compare them byte for byte).
import { bitsForDigits, DEFAULT_MAX_NUMBER_DIGITS } from "../codec/big-numbers.js";

/**
 * What the Java serializations' writers and readers (hessian2, fastjson2 JSONB) share: a
 * growable output buffer, and a bounds-checked read cursor with depth and node budgets.
 */

/** An output buffer that doubles as it fills. */
export class ByteWriter {
  protected buf = Buffer.allocUnsafe(256);
  protected len = 0;

  /** The bytes written so far (a copy). */
  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.len));
  }

  protected room(n: number): undefined {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  byte(b: number): undefined {
    this.room(1);
    this.buf[this.len++] = b;
  }

  protected raw(b: Uint8Array): undefined {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
}

/** Limits of one read: nesting depth, values produced (references included), big numbers. */
export interface ReadLimits {
  /** Deepest nesting of lists, maps and objects (default 64). */
  maxDepth?: number;
  /** Most values in the result, repeats through references included (default 1,000,000). */
  maxNodes?: number;
  /**
   * Most decimal digits of one big number (default 4096, `limits.maxNumberDigits`); one given in
   * binary (JSONB's `BigInteger` bytes) may have `maxNumberDigits × log2(10)` bits.
   */
  maxNumberDigits?: number;
}

/** A read position over bytes that never reads past their end: every overrun is `fail`. */
export abstract class ByteCursor {
  pos = 0;
  depth = 0;
  nodes = 0;
  readonly maxDepth: number;
  readonly maxNodes: number;
  readonly maxNumberDigits: number;

  constructor(
    readonly b: Uint8Array,
    limits: ReadLimits,
  ) {
    this.maxDepth = limits.maxDepth ?? 64;
    this.maxNodes = limits.maxNodes ?? 1_000_000;
    this.maxNumberDigits = limits.maxNumberDigits ?? DEFAULT_MAX_NUMBER_DIGITS;
  }

  /**
   * Fails, before any conversion, on a big number of `bytes` bytes (two's complement, as Java's
   * `BigInteger.toByteArray()` writes it) over `maxNumberDigits`: its bits, less the sign bit.
   */
  checkBigNumber(bytes: number, what: string): void {
    const bits = bitsForDigits(this.maxNumberDigits);
    if (bytes * 8 - 1 > bits) {
      this.fail(`${what} of ${bytes} bytes is larger than this server takes (limits.maxNumberDigits: ${this.maxNumberDigits} digits, ${bits} bits)`);
    }
  }

  /** Throws the format's own error, naming the byte offset. */
  abstract fail(what: string): never;

  need(n: number): void {
    if (n < 0 || this.pos + n > this.b.length) this.fail(`${n} bytes announced, ${this.b.length - this.pos} left`);
  }

  byte(): number {
    if (this.pos >= this.b.length) this.fail("truncated");
    return this.b[this.pos++];
  }

  peek(): number {
    if (this.pos >= this.b.length) this.fail("truncated");
    return this.b[this.pos];
  }
}
