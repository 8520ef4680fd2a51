// Owns `SseServerStream`. A Triple client's server-streaming method with `httpVersion: "1.1"`: a
// plain JSON POST answered with Server-Sent Events, as a Triple server serves a plain HTTP caller …
// Must not change: Triple's wire rules as Dubbo Java speaks them (tri-* headers, the HTTP unary and
// stream forms).
import type * as http2 from "node:http2";
import type { OutgoingHttpHeaders } from "node:http";
import { Code } from "../protocol/code.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallOptions } from "../runtime/call-options.js";
import type { ResponseMode, StreamCall, WireMethod, WireSettings } from "../runtime/client-protocol.js";
import type { Attempt } from "../runtime/invocation.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { type CallScope, NEVER_ABORTS } from "../transport/client/call-scope.js";
import { transportError } from "../transport/client/errors.js";
import { Http1Transport } from "../transport/client/http1.js";
import type { Http1ResponseStream } from "../transport/client/http1-stream.js";
import type { Provider } from "../transport/client/provider.js";
import { CLIENT_QUEUE_BOUNDS, MessageQueue } from "../message/message-queue.js";
import type { MessageCodec } from "../message/message-codec.js";
import { errorFromHttpResponse } from "./client-reply.js";

/**
 * One server stream read as Server-Sent Events over HTTP/1.1 (what a Triple server answers a plain
 * JSON POST of a server-streaming method): a `data:` line per message, a final `event: error`
 * whose data is the JSON error body, the end of the body for success.
 */
class SseCall implements StreamCall {
  readonly responses: MessageQueue<unknown>;
  private status = 0;
  private headers: http2.IncomingHttpHeaders = {};
  private text = "";
  private errorBody: Buffer[] = [];
  private done = false;
  private stop: (() => void) | undefined = undefined;

  constructor(
    private readonly stream: Http1ResponseStream,
    provider: Provider,
    private readonly codec: MessageCodec,
    private readonly maxBytes: number,
    signal: AbortSignal,
  ) {
    this.responses = new MessageQueue<unknown>(
      (pause) => (pause ? stream.pause() : stream.resume()),
      CLIENT_QUEUE_BOUNDS,
      () => this.cancel(),
    );
    stream.on("response", (h: http2.IncomingHttpHeaders) => {
      this.status = Number(h[":status"]);
      this.headers = h;
    });
    stream.on("data", (c: Buffer) => this.onData(c));
    stream.on("end", () => this.onEnd());
    stream.on("error", (e: Error) => this.fail(signal.aborted ? signal.reason : transportError(provider.address, e)));
    stream.on("close", () =>
      this.fail(signal.aborted ? signal.reason : transportError(provider.address, new Error("the connection closed before the stream ended"))),
    );
  }

  private isEvents(): boolean {
    return this.status === 200 && /^text\/event-stream\b/.test(String(this.headers[H.contentType] ?? ""));
  }

  private onData(c: Buffer): void {
    if (this.done) return;
    if (!this.isEvents()) {
      if (this.errorBody.reduce((n, b) => n + b.length, c.length) <= this.maxBytes) this.errorBody.push(c);
      return;
    }
    this.text += c.toString("utf8");
    if (this.text.length > this.maxBytes) {
      this.fail(new RpcError(Code.ResourceExhausted, `an event of the stream exceeds ${this.maxBytes} bytes`));
      return;
    }
    this.text = this.text.replace(/\r\n?/g, "\n");
    for (let end = this.text.indexOf("\n\n"); end >= 0 && !this.done; end = this.text.indexOf("\n\n")) {
      const event = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      this.onEvent(event);
    }
  }

  /** One event: its `data:` lines joined; `event: error` ends the call with the error body's error. */
  private onEvent(event: string): void {
    let kind = "message";
    const data: string[] = [];
    for (const line of event.split("\n")) {
      if (line.startsWith("event:")) kind = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
    }
    if (data.length === 0) return;
    const body = Buffer.from(data.join("\n"), "utf8");
    if (kind === "error") {
      this.fail(errorFromHttpResponse(500, {}, body));
      return;
    }
    try {
      this.responses.push(this.codec.decodeResponse(body), body.length);
    } catch (e) {
      this.fail(e);
    }
  }

  private onEnd(): void {
    if (this.done) return;
    if (!this.isEvents()) {
      const ct = String(this.headers[H.contentType] ?? "(none)");
      const body = Buffer.concat(this.errorBody);
      this.fail(
        this.status === 200
          ? new RpcError(Code.Internal, `the response has Content-Type ${ct} where text/event-stream was expected`)
          : errorFromHttpResponse(this.status, this.headers as never, body),
      );
      return;
    }
    if (this.text.trim()) this.onEvent(this.text);
    if (this.done) return;
    this.done = true;
    this.responses.end();
    this.stop?.();
  }

  private fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.responses.fail(err);
    this.stream.close();
    this.stop?.();
  }

  result(): Promise<unknown> {
    return Promise.reject(new RpcError(Code.Internal, "an SSE call has no single result"));
  }

  sendArgs(payload: Uint8Array): void {
    this.stream.end(payload);
  }

  send(): Promise<boolean> {
    return Promise.resolve(false);
  }

  end(): void {}

  cancel(reason?: unknown): void {
    this.fail(reason ?? new RpcError(Code.Cancelled, "the call was cancelled"));
  }

  onSettled(stop: () => void): void {
    if (this.done) stop();
    else this.stop = stop;
  }
}

/**
 * A Triple client's server-streaming method with `httpVersion: "1.1"`: a plain JSON POST answered
 * with Server-Sent Events, as a Triple server serves a plain HTTP caller (Express, Fastify without
 * http2 and node:http mounts speak nothing else). Over HTTP/2 a Triple client streams as gRPC.
 */
export class SseServerStream implements WireMethod {
  readonly protocol = "triple";
  readonly headers: OutgoingHttpHeaders;

  constructor(
    private readonly md: MethodDescriptor,
    private readonly codec: MessageCodec,
    headers: OutgoingHttpHeaders,
    private readonly settings: WireSettings,
  ) {
    this.headers = { ...headers, [H.contentType]: "application/json", accept: "text/event-stream" };
  }

  encodeArgs(args: readonly unknown[]): Uint8Array {
    return this.codec.encodeArgs(args);
  }

  unary(): Attempt<unknown> {
    throw new TypeError(`${this.md.path} is server-streaming`);
  }

  open(p: Provider, headers: OutgoingHttpHeaders, scope: CallScope, _opts: CallOptions | undefined, _mode: ResponseMode): Promise<StreamCall> {
    const transport = this.settings.unary();
    if (!(transport instanceof Http1Transport)) return Promise.reject(new RpcError(Code.Internal, "SSE streams need the HTTP/1.1 transport"));
    const ms = scope.remaining();
    const h = ms === undefined ? headers : { ...headers, [H.triServiceTimeout]: String(Math.max(1, Math.ceil(ms))) };
    const stream = transport.openStream(p, this.md.path, h);
    const call = new SseCall(stream, p, this.codec, this.settings.maxBytes, scope.signal);
    const signal = scope.signal;
    if (signal.aborted) call.cancel(signal.reason);
    else if (signal !== NEVER_ABORTS) {
      const onAbort = () => call.cancel(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      call.onSettled(() => signal.removeEventListener("abort", onAbort));
    }
    return Promise.resolve(call);
  }
}
