// Owns `WebSocketResponder`. Writes the response side of a WebSocket call: each message as one
// binary message, bare (the frame the call hands over minus its 5-byte prefix). Must not change:
// the framing the web client and the server agree on; bounds on every frame.
import type { RpcError } from "../protocol/rpc-error.js";
import type { MessageCodec } from "../message/codec-types.js";
import { encodeFrame } from "../message/framing.js";
import type { StreamResponder } from "../protocol-grpc/stream-responder.js";
import type { WebSocketExchange } from "./exchange.js";
import { closeCodeOf, closeReasonOf, WS_CLOSE } from "./wire.js";

/**
 * Writes the response side of a WebSocket call: each message as one binary message, bare (the
 * frame the call hands over minus its 5-byte prefix); the end as a close, 1000 when the call
 * succeeded, else the error's code (1011, 1001 when the server shuts down) with
 * `<code name>: <message>` as the reason. WebSocket has no per-message compression of ours and no
 * response headers or trailers after the handshake.
 */
export class WebSocketResponder implements StreamResponder {
  private done = false;
  private started = false;

  constructor(private readonly ex: WebSocketExchange) {}

  /** The handshake's 101 went out before the call began. */
  get headersSent(): boolean {
    return true;
  }

  frameOf(codec: MessageCodec, value: unknown): Buffer {
    return codec.encodeResponseFrame ? codec.encodeResponseFrame(value) : encodeFrame(codec.encodeResponse(value));
  }

  send(frame: Buffer): boolean {
    if (this.done) return true;
    this.begin();
    return this.ex.write(frame.subarray(5));
  }

  reply(frame: Buffer): void {
    if (this.done) return;
    this.begin();
    this.ex.write(frame.subarray(5));
    this.finish(undefined);
  }

  /** Tells the exchange's observers (the access log) the status once: the handshake's 101 (or 200 over HTTP/2). */
  private begin(): void {
    if (this.started) return;
    this.started = true;
    this.ex.start(this.ex.handshakeStatus, {}, false);
  }

  finish(err: RpcError | undefined): void {
    if (this.done) return;
    this.begin();
    this.done = true;
    if (err === undefined) this.ex.endWith(WS_CLOSE.normal);
    else this.ex.endWith(closeCodeOf(err), closeReasonOf(err));
  }
}
