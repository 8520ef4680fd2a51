import type { ResponseCodec } from "../codec/codec.js";
import { encodeJsonValue } from "../codec/json-codec.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { Exchange, OutHeaders } from "../transport/exchange.js";
import type { CallContext } from "./context.js";
import { errorBody, sendHttpError } from "./error-response.js";
import type { RegisteredMethod } from "./router.js";

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return x !== null && typeof x === "object" && typeof (x as PromiseLike<unknown>).then === "function";
}

function iteratorOf(x: unknown): AsyncIterator<unknown> | Iterator<unknown> | undefined {
  if (x === null || typeof x !== "object") return undefined;
  const o = x as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
  if (typeof o[Symbol.asyncIterator] === "function") return o[Symbol.asyncIterator]!();
  if (typeof o[Symbol.iterator] === "function") return o[Symbol.iterator]!();
  return undefined;
}

/**
 * Serves a server-streaming method over plain HTTP (HTTP/1.1, or HTTP/2 without a gRPC content
 * type) as Server-Sent Events (decisions.md): `200 text/event-stream`, one `data:` line per
 * message (JSON; ProtoJSON for .proto methods), and an error after the stream started as a final
 * `event: error` whose data is the usual JSON error body. Errors before the handler produced its
 * stream (interceptors, a rejected promise) are ordinary HTTP error responses. The codec chosen
 * by the unary path is not used: SSE is text, so messages are always JSON.
 */
export function serveServerStreamAsSse(
  ex: Exchange,
  route: RegisteredMethod,
  ctx: CallContext,
  args: unknown[],
  _codec: ResponseCodec,
  untrack: () => void,
  _timeoutMs: number | undefined,
): void {
  const md = route.descriptor;
  let finished = false;
  let started = false;
  let iterator: AsyncIterator<unknown> | Iterator<unknown> | undefined;
  let drainWaiter: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const stop = () => {
    const it = iterator;
    iterator = undefined;
    if (it && typeof it.return === "function") {
      Promise.resolve()
        .then(() => it.return!())
        .catch(() => {});
    }
  };
  const finish = (reason: unknown) => {
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    untrack();
    drainWaiter?.();
    if (reason === undefined) {
      ex.end();
      return;
    }
    const err = RpcError.from(reason);
    ctx.abort(err);
    stop();
    if (!started) {
      sendHttpError(ex, err);
      return;
    }
    ex.write(`event: error\ndata: ${errorBody(err)}\n\n`);
    ex.end();
  };

  ex.onAbort(() => {
    ctx.abort(new RpcError(Code.Cancelled, "the client cancelled the call"));
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    untrack();
    drainWaiter?.();
    stop();
  });
  // The unary path's timer is cleared before it hands over; the deadline itself still holds.
  const remaining = ctx.timeRemaining();
  if (remaining !== undefined) {
    timer = setTimeout(() => {
      finish(new RpcError(Code.DeadlineExceeded, "the call exceeded its timeout", { legacyStatus: 31 }));
    }, remaining);
  }

  const pump = async (it: AsyncIterator<unknown> | Iterator<unknown>) => {
    try {
      for (;;) {
        const r = await it.next();
        if (finished) return;
        if (r.done) break;
        const data = encodeJsonValue(md, r.value);
        if (!ex.write(`data: ${data}\n\n`)) {
          await new Promise<void>((resolve) => {
            drainWaiter = resolve;
            ex.onDrain(resolve);
          });
          drainWaiter = undefined;
          if (finished) return;
        }
      }
      iterator = undefined;
      finish(undefined);
    } catch (e) {
      iterator = undefined;
      finish(RpcError.from(e));
    }
  };

  const onStream = (result: unknown) => {
    if (finished) return;
    const it = iteratorOf(result);
    if (!it) {
      finish(new RpcError(Code.Internal, `${md.path} is server-streaming and must return an AsyncIterable`));
      return;
    }
    iterator = it;
    started = true;
    const headers: OutHeaders = {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      // Proxies such as nginx would otherwise hold events back.
      "x-accel-buffering": "no",
    };
    ctx.copyResponseHeadersTo(headers);
    ex.start(200, headers, false);
    void pump(it);
  };

  let result: unknown;
  try {
    result = route.invoke(ctx, args);
  } catch (e) {
    finish(RpcError.from(e));
    return;
  }
  if (isThenable(result)) result.then(onStream, (e) => finish(RpcError.from(e)));
  else onStream(result);
}
