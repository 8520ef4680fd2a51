// Owns `ServerTelemetry`, `ServerCallObserver`. A server's instruments and tracer; `observe()`
// starts one call's ServerCallObserver. Must not change: the OpenTelemetry names, and no cost per
// call when telemetry is off.
import {
  type Context,
  context,
  defaultTextMapGetter,
  type Histogram,
  type Link,
  type Meter,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallObserver } from "../runtime/call-observer.js";
import type { CallContext } from "../runtime/context.js";
import type { Exchange } from "../transport/server/exchange.js";
import { LabelCache, type MethodLabels } from "./labels.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_RPC_METHOD_ORIGINAL,
  ATTR_RPC_STATUS_CODE,
  RPC_METHOD_OTHER,
  statusCodeName,
  DURATION_BUCKETS,
  isServerError,
  METRIC_SERVER_ACTIVE_CALLS,
  METRIC_SERVER_CALL_DURATION,
  METRIC_SERVER_REQUEST_SIZE,
  METRIC_SERVER_RESPONSE_SIZE,
  rpcSystemOf,
  serverSpanAttributes,
} from "./semconv.js";
import { type TelemetryOptions, TelemetrySwitch } from "./telemetry.js";

/** The server's telemetry settings. */
export interface ServerTelemetryOptions extends TelemetryOptions {
  /**
   * Make a caller's trace context (`traceparent`) the parent of the server span, and pass its
   * baggage to the handler. Default true. False starts a new trace per call, linked to the
   * caller's span, for servers that face untrusted callers.
   */
  trustRemoteParent?: boolean;
  /**
   * Record the per-message size histograms (`rpc.server.request.size` / `response.size`, outside
   * the current conventions). Default true; false saves two histogram points per unary call.
   */
  messageSizes?: boolean;
}

/** Where the server listens, for `server.address` / `server.port`. */
export type ServerAddress = () => { address: string; port: number } | undefined;

/** A server's instruments and tracer; `observe()` starts one call's {@link ServerCallObserver}. */
export class ServerTelemetry extends TelemetrySwitch {
  duration: Histogram | undefined = undefined;
  requestSize: Histogram | undefined = undefined;
  responseSize: Histogram | undefined = undefined;
  /** Metrics are on: calls count themselves in their labels' `active` for the active-calls gauge. */
  metered = false;
  private readonly labels = new LabelCache();
  private readonly trustRemote: boolean;
  private readonly messageSizes: boolean;
  private listening: { address: string; port: number } | undefined = undefined;

  constructor(
    options: ServerTelemetryOptions | undefined,
    private readonly address: ServerAddress,
  ) {
    super(options);
    this.trustRemote = options?.trustRemoteParent ?? true;
    this.messageSizes = options?.messageSizes ?? true;
  }

  protected createInstruments(meter: Meter): void {
    this.duration = meter.createHistogram(METRIC_SERVER_CALL_DURATION, {
      description: "Duration of server calls, from the request's headers to the call's end.",
      unit: "s",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    });
    // Counted in the labels and observed at collection: no SDK work per call.
    const active = meter.createObservableUpDownCounter(METRIC_SERVER_ACTIVE_CALLS, {
      description: "Server calls in progress.",
      unit: "{call}",
    });
    active.addCallback((result) => {
      this.labels.forEach((l) => {
        result.observe(l.active, l.base);
      });
    });
    this.metered = true;
    if (!this.messageSizes) return;
    this.requestSize = meter.createHistogram(METRIC_SERVER_REQUEST_SIZE, {
      description: "Size of each request message (a unary body as it arrived), bytes.",
      unit: "By",
    });
    this.responseSize = meter.createHistogram(METRIC_SERVER_RESPONSE_SIZE, {
      description: "Size of each response message (a unary body as sent), bytes.",
      unit: "By",
    });
  }

  /** Starts observing a call whose request headers are `ex.headers`. */
  observe(ctx: CallContext, ex: Exchange): ServerCallObserver {
    const labels = this.labels.of(ctx.method, rpcSystemOf(ctx.protocol));
    const tracer = this.tracer;
    if (tracer === undefined) return new ServerCallObserver(this, labels, undefined, undefined);
    const active = context.active();
    const remote = this.propagation.extract(active, ex.headers, defaultTextMapGetter);
    const server = (this.listening ??= this.address());
    const peer = ctx.peer;
    const attributes = serverSpanAttributes(labels.system, labels.name, server?.address, server?.port, peer.address, peer.port);
    const options = { kind: SpanKind.SERVER, attributes };
    let parent = remote;
    if (!this.trustRemote) {
      const sc = trace.getSpanContext(remote);
      const links: Link[] | undefined = sc && sc !== trace.getSpanContext(active) ? [{ context: sc }] : undefined;
      parent = trace.deleteSpan(active);
      Object.assign(options, { links, root: true });
    }
    const span = tracer.startSpan(labels.name, options, parent);
    return new ServerCallObserver(this, labels, span, trace.setSpan(parent, span));
  }

  /**
   * A call refused before it reached a method (an unknown service or method, a bad header, a
   * content type no protocol speaks): one SERVER span, ended at once with the error. Its
   * `rpc.method` is the method's name when the server knows it, else `_OTHER` with
   * `rpc.method_original` holding what the request named; the span is named after the method, or
   * after the RPC system for `_OTHER`, as the conventions say.
   */
  refused(ex: Exchange, protocol: string, err: RpcError, known: boolean): void {
    const tracer = this.tracer;
    if (tracer === undefined) return;
    const system = rpcSystemOf(protocol);
    const original = ex.path.slice(1);
    const server = (this.listening ??= this.address());
    const attributes = serverSpanAttributes(system, known ? original : RPC_METHOD_OTHER, server?.address, server?.port, ex.peer.address, ex.peer.port);
    if (!known) (attributes as Record<string, string>)[ATTR_RPC_METHOD_ORIGINAL] = original;
    const parent = this.trustRemote ? this.propagation.extract(context.active(), ex.headers, defaultTextMapGetter) : context.active();
    const span = tracer.startSpan(known ? original : system, { kind: SpanKind.SERVER, attributes }, parent);
    const status = statusCodeName(system, err.code);
    span.setAttribute(ATTR_RPC_STATUS_CODE, status);
    if (isServerError(err.code)) {
      span.setAttribute(ATTR_ERROR_TYPE, status);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    }
    span.end();
  }
}

/** One server call's span and metrics (see {@link CallObserver}). */
export class ServerCallObserver implements CallObserver {
  private readonly start = performance.now();

  constructor(
    private readonly tel: ServerTelemetry,
    private readonly labels: MethodLabels,
    private readonly span: Span | undefined,
    private readonly context: Context | undefined,
  ) {
    if (tel.metered) labels.active++;
  }

  within<A extends unknown[]>(fn: (...args: A) => void, ...args: A): void {
    if (this.context === undefined) fn(...args);
    else context.with(this.context, fn, undefined, ...args);
  }

  received(bytes: number): void {
    this.tel.requestSize?.record(bytes, this.labels.base);
  }

  sent(bytes: number): void {
    this.tel.responseSize?.record(bytes, this.labels.base);
  }

  end(error: RpcError | undefined): void {
    const code = error === undefined ? Code.OK : error.code;
    const failed = error !== undefined && isServerError(code);
    const span = this.span;
    if (span !== undefined) {
      const status = this.labels.status(code);
      span.setAttribute(ATTR_RPC_STATUS_CODE, status);
      if (failed) {
        span.setAttribute(ATTR_ERROR_TYPE, status);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      }
      const cause = error?.cause;
      if (cause instanceof Error && !(cause instanceof RpcError)) span.recordException(cause);
      span.end();
    }
    const tel = this.tel;
    tel.duration?.record((performance.now() - this.start) / 1000, this.labels.withStatus(code, failed));
    if (tel.metered) this.labels.active--;
  }
}
