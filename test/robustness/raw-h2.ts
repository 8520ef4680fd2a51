import * as net from "node:net";

/** HTTP/2 frame types (RFC 9113 §6). */
export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

/** HTTP/2 error codes (RFC 9113 §7). */
export const H2Error = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;

/** The client connection preface (RFC 9113 §3.4). */
export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** One frame: 9-byte header plus payload; `length` overrides the declared length (bad sizes). */
export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0), length = payload.length): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([h, payload]);
}

function hpackString(s: string): Buffer {
  const b = Buffer.from(s, "latin1");
  if (b.length >= 127) throw new Error("test helper: HPACK strings under 127 bytes only");
  return Buffer.concat([Buffer.from([b.length]), b]);
}

/** An HPACK header block of literal fields without indexing, new names (RFC 7541 §6.2.2). */
export function hpack(headers: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat(headers.flatMap(([n, v]) => [Buffer.from([0x00]), hpackString(n), hpackString(v)]));
}

/** Request headers of a Greet call over Triple HTTP (JSON). */
export function greetHeaders(authority: string): [string, string][] {
  return [
    [":method", "POST"],
    [":scheme", "http"],
    [":path", "/greet.GreetService/Greet"],
    [":authority", authority],
    ["content-type", "application/json"],
  ];
}

/** A frame as read back from the server. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/**
 * A raw HTTP/2 client connection: writes arbitrary bytes after the preface and parses what the
 * server sends back, so tests can see GOAWAY / RST_STREAM codes and the connection closing.
 */
export class RawH2 {
  readonly frames: Frame[] = [];
  closed = false;
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.on("data", (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      while (this.buf.length >= 9) {
        const len = this.buf.readUIntBE(0, 3);
        if (this.buf.length < 9 + len) break;
        this.frames.push({
          type: this.buf[3],
          flags: this.buf[4],
          streamId: this.buf.readUInt32BE(5) & 0x7fffffff,
          payload: this.buf.subarray(9, 9 + len),
        });
        this.buf = this.buf.subarray(9 + len);
      }
      this.notify();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
      this.notify();
    });
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Connects (from `localAddress`, a loopback address, when given) and sends the preface and an empty SETTINGS frame (unless `handshake` is false). */
  static connect(port: number, handshake = true, localAddress?: string): Promise<RawH2> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: "127.0.0.1", localAddress }, () => {
        const c = new RawH2(socket);
        if (handshake) {
          socket.write(PREFACE);
          socket.write(frame(FrameType.SETTINGS, 0, 0));
          socket.write(frame(FrameType.SETTINGS, FLAG_ACK, 0));
        }
        resolve(c);
      });
      socket.once("error", reject);
    });
  }

  /** Writes bytes; false when the socket is already gone. */
  write(b: Buffer): boolean {
    if (this.socket.destroyed) return false;
    this.socket.write(b);
    return true;
  }

  /** The first GOAWAY's error code, if one arrived. */
  get goAwayCode(): number | undefined {
    const g = this.frames.find((f) => f.type === FrameType.GOAWAY);
    return g ? g.payload.readUInt32BE(4) : undefined;
  }

  /** RST_STREAM codes received for `streamId`. */
  rstCodes(streamId: number): number[] {
    return this.frames.filter((f) => f.type === FrameType.RST_STREAM && f.streamId === streamId).map((f) => f.payload.readUInt32BE(0));
  }

  /** Waits until `pred` holds or `ms` pass; resolves with whether it held. */
  async waitFor(pred: () => boolean, ms = 3000): Promise<boolean> {
    const end = Date.now() + ms;
    while (!pred()) {
      const left = end - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    return true;
  }

  /** Waits for the server to end the connection (GOAWAY received or socket closed). */
  waitGoneOrGoAway(ms = 3000): Promise<boolean> {
    return this.waitFor(() => this.closed || this.goAwayCode !== undefined, ms);
  }

  destroy(): void {
    this.socket.destroy();
  }
}
