import * as path from "node:path";
import { type CallContext, Code, Ctx, Method, Param, RpcError, Service } from "../../src/index.js";
import { ERROR_INFO_TYPE, encodeErrorInfo } from "./error-info.js";

/** The request message of greet.proto. */
export interface GreetRequest {
  name: string;
}

/** The response message of greet.proto. */
export interface GreetResponse {
  greeting: string;
}

/** GreetSlowly's request message. */
export interface GreetSlowlyRequest {
  name: string;
  delay_ms: number;
}

/** Where greet.proto lives (next to the sources, one level above the compiled file). */
export const GREET_PROTO = path.resolve(__dirname, "../../../samples/greet/greet.proto");

/** How many greetings `GreetServerStream` sends for one request. */
export const SERVER_STREAM_GREETINGS = 3;

/** The `domain` of the google.rpc.ErrorInfo that `GreetWithDetails` sends. */
export const GREET_ERROR_DOMAIN = "greet.triple-rpc";

/** The `Cache-Control` that `GreetCached` answers with. */
export const GREET_CACHE_CONTROL = "public, max-age=60";

/** The longest wait `GreetSlowly` accepts, ms. */
export const GREET_MAX_DELAY_MS = 60_000;

/**
 * The sample greeting service, the Triple protocol's own example:
 * - `Greet` accepts exactly one name and answers `greeting` = that name; any other name fails
 *   with `name is not right: <name>`.
 * - `GreetServerStream` (server streaming) answers one request with
 *   {@link SERVER_STREAM_GREETINGS} greetings `hello, <name> (1/3)`, `(2/3)`, `(3/3)`.
 * - `GreetClientStream` (client streaming) reads every request and answers once with the
 *   received names joined by `", "` (`""` when the client sent none).
 * - `GreetStream` (bidi) echoes one greeting per request as it arrives: `greeting` = `name`.
 *
 * - `GreetWithDetails` (unary) follows `Greet`'s rule, but the wrong name fails with
 *   `invalid_argument`, the same text `name is not right: <name>`, and one error detail: a
 *   `google.rpc.ErrorInfo` { reason `NAME_NOT_RIGHT`, domain {@link GREET_ERROR_DOMAIN},
 *   metadata { name, accepted } } (see `error-info.ts`). It shows details on every protocol:
 *   Connect's error JSON, gRPC's and gRPC-Web's `grpc-status-details-bin`, the Triple error body.
 * - `GreetCached` (unary, `@Method({ idempotent: true })`, `idempotency_level = NO_SIDE_EFFECTS`
 *   in greet.proto) answers `hello, <name>` for any name, with `Cache-Control`
 *   {@link GREET_CACHE_CONTROL}: being side-effect free, it can be called with HTTP GET
 *   (Connect's `?connect=v1&encoding=json&message=…`, dubbo-js's `?triple=v1.0.0…`).
 * - `GreetSlowly` (unary) waits `delay_ms` (at most {@link GREET_MAX_DELAY_MS}) and answers
 *   `greeting` = `name`; it stops waiting when the call is aborted (the deadline passed, the
 *   client went away), which makes it the sample's deadline example.
 *
 * The streaming methods greet any name: the accepted-name rule belongs to `Greet` (and
 * `GreetWithDetails`) alone.
 */
@Service("greet.GreetService", { proto: GREET_PROTO })
export class GreetServiceImpl {
  constructor(readonly acceptedName = "triple") {}

  @Method("Greet")
  async greet(@Param() req: GreetRequest): Promise<GreetResponse> {
    if (req.name !== this.acceptedName) throw new Error(`name is not right: ${req.name}`);
    return { greeting: req.name };
  }

  @Method("GreetServerStream")
  async *greetServerStream(@Param() req: GreetRequest): AsyncGenerator<GreetResponse> {
    for (let i = 1; i <= SERVER_STREAM_GREETINGS; i++) {
      yield { greeting: `hello, ${req.name} (${i}/${SERVER_STREAM_GREETINGS})` };
    }
  }

  @Method("GreetClientStream")
  async greetClientStream(@Param() reqs: AsyncIterable<GreetRequest>): Promise<GreetResponse> {
    const names: string[] = [];
    for await (const r of reqs) names.push(r.name);
    return { greeting: names.join(", ") };
  }

  @Method("GreetStream")
  async *greetStream(@Param() reqs: AsyncIterable<GreetRequest>): AsyncGenerator<GreetResponse> {
    for await (const r of reqs) yield { greeting: r.name };
  }

  @Method("GreetWithDetails")
  async greetWithDetails(@Param() req: GreetRequest): Promise<GreetResponse> {
    if (req.name === this.acceptedName) return { greeting: req.name };
    const value = encodeErrorInfo({
      reason: "NAME_NOT_RIGHT",
      domain: GREET_ERROR_DOMAIN,
      metadata: { name: req.name, accepted: this.acceptedName },
    });
    throw new RpcError(Code.InvalidArgument, `name is not right: ${req.name}`, { details: [{ type: ERROR_INFO_TYPE, value }] });
  }

  @Method({ name: "GreetCached", idempotent: true })
  async greetCached(@Param() req: GreetRequest, @Ctx() ctx: CallContext): Promise<GreetResponse> {
    ctx.responseHeaders.set("cache-control", GREET_CACHE_CONTROL);
    return { greeting: `hello, ${req.name}` };
  }

  @Method("GreetSlowly")
  async greetSlowly(@Param() req: GreetSlowlyRequest, @Ctx() ctx: CallContext): Promise<GreetResponse> {
    const ms = Math.min(Number(req.delay_ms) || 0, GREET_MAX_DELAY_MS);
    const signal = ctx.signal;
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    return { greeting: req.name };
  }
}

export { RpcError, Code };
