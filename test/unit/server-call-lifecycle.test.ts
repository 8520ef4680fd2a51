import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "../../src/protocol/code.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { CallContext } from "../../src/runtime/context.js";
import { HandlerErrors } from "../../src/runtime/handler-errors.js";
import type { RegisteredMethod } from "../../src/runtime/router.js";
import type { ServerCore } from "../../src/runtime/server-core.js";
import { ServerCallLifecycle } from "../../src/runtime/server-call-lifecycle.js";
import type { MethodDescriptor } from "../../src/service/descriptors.js";
import type { AbortSink, Exchange } from "../../src/transport/server/exchange.js";

/**
 * The one server-call lifecycle, driven by the smallest protocol there can be: a call that logs
 * what the lifecycle asks of it. Every protocol's call (Triple, Connect, the enveloped call, SSE)
 * extends the same class, so what holds here holds for each, and for the next one added.
 */

type Log = string[];

function core(log: Log): ServerCore {
  return {
    track: () => log.push("track"),
    untrack: (_ctx: CallContext, err: RpcError | undefined) => log.push(`untrack:${err ? Code[err.code] : "ok"}`),
  } as unknown as ServerCore;
}

/** An exchange for a call that never touches the network: only the abort sink is kept. */
function exchange(log: Log): Exchange & { abortSink?: AbortSink } {
  const ex = {
    aborted: false,
    headers: {},
    onAbort(sink: AbortSink) {
      log.push("onAbort");
      ex.abortSink = sink;
    },
  } as unknown as Exchange & { abortSink?: AbortSink };
  return ex;
}

const md = { path: "/fake.Service/call", name: "call", kind: "unary" } as unknown as MethodDescriptor;

function route(handler: (args: unknown[]) => unknown, authorize?: RegisteredMethod["authorize"]): RegisteredMethod {
  return {
    descriptor: md,
    invoke: (_ctx: CallContext, args: unknown[]) => handler(args),
    errors: new HandlerErrors({ error() {}, warn() {}, info() {}, debug() {} } as never, false),
    authorize,
    seesContext: false,
  } as unknown as RegisteredMethod;
}

/** The fake protocol: reads one argument, answers with a log line, writes errors as log lines. */
class FakeCall extends ServerCallLifecycle {
  constructor(
    private readonly log: Log,
    c: ServerCore,
    ex: Exchange,
    r: RegisteredMethod,
    timeoutMs: number | undefined,
  ) {
    super(c, ex, r, new CallContext(md, {}, "triple", "2", { address: "127.0.0.1", port: 1 }, timeoutMs));
    this.start(timeoutMs);
  }

  protected readRequest(): void {
    this.log.push("read");
    this.invoke(["x"]);
  }

  handlerReturned(value: unknown): void {
    this.log.push(`answer:${String(value)}`);
    this.finish(undefined);
  }

  /** Exposed for the test: a protocol ending twice (e.g. a late reply after a failure). */
  end(err: RpcError | undefined): void {
    this.finish(err);
  }

  protected writeEnd(err: RpcError | undefined): void {
    this.log.push(`write:${err ? Code[err.code] : "ok"}`);
  }

  protected override release(err: RpcError | undefined): void {
    this.log.push(`release:${err ? Code[err.code] : "ok"}`);
  }
}

const tick = () => new Promise((r) => setImmediate(r));

describe("ServerCallLifecycle: a protocol's call cannot skip a step", () => {
  it("a call: tracked, abort sink, read, handler, one end written, untracked, released: in that order", () => {
    const log: Log = [];
    new FakeCall(
      log,
      core(log),
      exchange(log),
      route((a) => a[0]),
      undefined,
    );
    assert.deepEqual(log, ["track", "onAbort", "read", "answer:x", "write:ok", "untrack:ok", "release:ok"]);
  });

  it("the deadline fires: the context is aborted and the error written once, untracked once", async () => {
    const log: Log = [];
    let call: FakeCall | undefined;
    call = new FakeCall(
      log,
      core(log),
      exchange(log),
      route(() => new Promise(() => {})),
      5,
    );
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(call.ctx.aborted, true);
    assert.equal((call.ctx.signal.reason as RpcError).code, Code.DeadlineExceeded);
    call.fail(new Error("late"));
    call.end(undefined);
    assert.deepEqual(log, ["track", "onAbort", "read", "write:DeadlineExceeded", "untrack:DeadlineExceeded", "release:DeadlineExceeded"]);
    call = undefined;
  });

  it("finish twice ends once; a late handler outcome writes nothing", () => {
    const log: Log = [];
    const call = new FakeCall(
      log,
      core(log),
      exchange(log),
      route(() => new Promise(() => {})),
      undefined,
    );
    call.end(new RpcError(Code.Unavailable, "shutting down"));
    call.end(undefined);
    call.handlerFailed(new Error("after the end"));
    assert.deepEqual(log.slice(3), ["write:Unavailable", "untrack:Unavailable", "release:Unavailable"]);
  });

  it("a failure is untracked with its error, the context aborted, the request side released", () => {
    const log: Log = [];
    const call = new FakeCall(
      log,
      core(log),
      exchange(log),
      route(() => {
        throw new RpcError(Code.NotFound, "none");
      }),
      undefined,
    );
    assert.deepEqual(log.slice(3), ["write:NotFound", "untrack:NotFound", "release:NotFound"]);
    assert.equal(call.ctx.aborted, true);
    assert.equal(call.finished, true);
  });

  it("authorization runs before the body is read; a refused caller's body is never read", async () => {
    const log: Log = [];
    const deny = async () => {
      log.push("authorize");
      throw new RpcError(Code.Unauthenticated, "no token");
    };
    new FakeCall(
      log,
      core(log),
      exchange(log),
      route((a) => a[0], deny),
      undefined,
    );
    await tick();
    assert.deepEqual(log, ["track", "onAbort", "authorize", "write:Unauthenticated", "untrack:Unauthenticated", "release:Unauthenticated"]);

    const log2: Log = [];
    const allow = async () => {
      log2.push("authorize");
    };
    new FakeCall(
      log2,
      core(log2),
      exchange(log2),
      route((a) => a[0], allow),
      undefined,
    );
    assert.deepEqual(log2, ["track", "onAbort", "authorize"], "nothing is read while authorization is pending");
    await tick();
    assert.deepEqual(log2.slice(3), ["read", "answer:x", "write:ok", "untrack:ok", "release:ok"]);
  });

  it("the peer going away: cancelled, nothing written, untracked and released once", () => {
    const log: Log = [];
    const ex = exchange(log);
    const call = new FakeCall(
      log,
      core(log),
      ex,
      route(() => new Promise(() => {})),
      10_000,
    );
    ex.abortSink!.onExchangeAbort();
    ex.abortSink!.onExchangeAbort();
    call.end(undefined);
    assert.equal(call.ctx.aborted, true);
    assert.deepEqual(log.slice(3), ["untrack:Cancelled", "release:Cancelled"]);
  });
});
