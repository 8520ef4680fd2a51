// Owns `clientStream`, `bidiStream`. A client-streaming call: one response after the request stream
// ended. Must not change: no node: import and no server code: it runs in browsers (the bundle
// budget test checks).
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallOptions } from "../runtime/call-options.js";
import type { WebCore, WebMethod } from "./core.js";
import type { WebScope } from "./scope.js";
import type { WebStreamCall } from "./transport.js";
import type { WebCodec } from "./wire.js";

/**
 * Client- and bidi-streaming calls over the client's `streams` transport (transport.ts): the
 * caller's request messages are encoded and sent one by one (each send awaited: back-pressure),
 * then the request side ends; the responses are decoded as they come. A failure of either side
 * ends the call; the transport's error (the server's code and message) is what the caller sees.
 */

async function open(core: WebCore, pm: WebMethod, opts: CallOptions | undefined, scope: WebScope): Promise<{ call: WebStreamCall; codec: WebCodec }> {
  const t = core.settings.streams;
  if (!t) {
    throw new RpcError(
      Code.Unimplemented,
      `${pm.md.path} is ${pm.md.kind === "client_streaming" ? "client" : "bidi"} streaming, which fetch cannot carry: give the client a streams transport (options.streams, e.g. a WebSocket transport)`,
    );
  }
  const [codec, init] = await Promise.all([pm.streamCodec(), core.streamInit(pm, opts, scope)]);
  const call = t.open(init);
  call.headers.then((h) => opts?.onHeaders?.(h)).catch(() => {});
  call.trailers.then((h) => opts?.onTrailers?.(h)).catch(() => {});
  return { call, codec };
}

/** Sends every request message, then ends the request side; stops at the first refused send. */
async function pump(call: WebStreamCall, codec: WebCodec, input: AsyncIterable<unknown> | Iterable<unknown>, scope: WebScope): Promise<void> {
  try {
    for await (const v of input) {
      if (scope.signal.aborted || !(await call.send(codec.encodeRequest(v)))) return;
    }
    call.end();
  } catch (e) {
    // The caller's iterable threw: the call is cancelled with its error as the cause.
    call.cancel(e);
    scope.end(new RpcError(Code.Cancelled, `the request stream failed: ${(e as Error)?.message ?? String(e)}`, { cause: e }));
  }
}

/** A client-streaming call: one response after the request stream ended. */
export async function clientStream(
  core: WebCore,
  pm: WebMethod,
  input: AsyncIterable<unknown> | Iterable<unknown>,
  opts: CallOptions | undefined,
): Promise<unknown> {
  const scope = core.scope(opts);
  let call: WebStreamCall | undefined;
  try {
    const opened = await open(core, pm, opts, scope);
    call = opened.call;
    void pump(call, opened.codec, input, scope);
    let result: { v: unknown } | undefined;
    for await (const m of call.responses) {
      if (result) throw new RpcError(Code.Unimplemented, "protocol error: more than one response message to a client-streaming call");
      result = { v: opened.codec.decodeResponse(m) };
    }
    if (!result) throw new RpcError(Code.Unimplemented, "protocol error: no response message to a client-streaming call");
    return result.v;
  } catch (e) {
    call?.cancel(e);
    throw scope.failure(e);
  } finally {
    scope.release();
  }
}

/** A bidi-streaming call: responses as they come while the request stream is sent; leaving the loop cancels the call. */
export async function* bidiStream(
  core: WebCore,
  pm: WebMethod,
  input: AsyncIterable<unknown> | Iterable<unknown>,
  opts: CallOptions | undefined,
): AsyncGenerator<unknown> {
  const scope = core.scope(opts);
  let call: WebStreamCall | undefined;
  let over = false;
  try {
    const opened = await open(core, pm, opts, scope);
    call = opened.call;
    const onAbort = () => call?.cancel(scope.signal.reason);
    scope.signal.addEventListener("abort", onAbort, { once: true });
    void pump(call, opened.codec, input, scope);
    for await (const m of call.responses) yield opened.codec.decodeResponse(m);
    over = true;
  } catch (e) {
    over = true;
    call?.cancel(e);
    throw scope.failure(e);
  } finally {
    if (!over) call?.cancel(new RpcError(Code.Cancelled, "the caller stopped reading the stream"));
    scope.release();
  }
}
