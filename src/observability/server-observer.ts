import {
  type Attributes,
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
  type UpDownCounter,
} from "@opentelemetry/api";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallObserver } from "../server/call-observer.js";
import type { CallContext } from "../server/context.js";
import type { Exchange } from "../transport/server/exchange.js";
import { LabelCache, type MethodLabels } from "./labels.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_NETWORK_PEER_ADDRESS,
  ATTR_NETWORK_PEER_PORT,
  ATTR_RPC_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  DURATION_BUCKETS,
  isServerError,
  METRIC_SERVER_ACTIVE_CALLS,
  METRIC_SERVER_CALL_DURATION,
  METRIC_SERVER_REQUEST_SIZE,
  METRIC_SERVER_RESPONSE_SIZE,
  rpcSystemOf,
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
}

/** Where the server listens, for `server.address` / `server.port`. */
export type ServerAddress = () => { address: string; port: number } | undefined;

/** A server's instruments and tracer; `observe()` starts one call's {@link ServerCallObserver}. */
export class ServerTelemetry extends TelemetrySwitch {
  duration: Histogram | undefined = undefined;
  requestSize: Histogram | undefined = undefined;
  responseSize: Histogram | undefined = undefined;
  activeCalls: UpDownCounter | undefined = undefined;
  private readonly labels = new LabelCache();
  private readonly trustRemote: boolean;
  private serverAttrs: Attributes | undefined = undefined;

  constructor(
    options: ServerTelemetryOptions | undefined,
    private readonly address: ServerAddress,
  ) {
    super(options);
    this.trustRemote = options?.trustRemoteParent ?? true;
  }

  protected createInstruments(meter: Meter): void {
    this.duration = meter.createHistogram(METRIC_SERVER_CALL_DURATION, {
      description: "Duration of server calls, from the request's headers to the call's end.",
      unit: "s",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    });
    this.requestSize = meter.createHistogram(METRIC_SERVER_REQUEST_SIZE, {
      description: "Size of each request message (a unary body as it arrived), bytes.",
      unit: "By",
    });
    this.responseSize = meter.createHistogram(METRIC_SERVER_RESPONSE_SIZE, {
      description: "Size of each response message (a unary body as sent), bytes.",
      unit: "By",
    });
    this.activeCalls = meter.createUpDownCounter(METRIC_SERVER_ACTIVE_CALLS, {
      description: "Server calls in progress.",
      unit: "{call}",
    });
  }

  /** Starts observing a call whose request headers are `ex.headers`. */
  observe(ctx: CallContext, ex: Exchange): ServerCallObserver {
    const labels = this.labels.of(ctx.method, rpcSystemOf(ctx.protocol));
    const tracer = this.tracer;
    if (tracer === undefined) return new ServerCallObserver(this, labels, undefined, undefined);
    const active = context.active();
    const remote = this.propagation.extract(active, ex.headers, defaultTextMapGetter);
    const attributes: Attributes = {
      ...labels.base,
      ...this.serverAttributes(),
      [ATTR_NETWORK_PEER_ADDRESS]: ctx.peer.address,
      [ATTR_NETWORK_PEER_PORT]: ctx.peer.port,
    };
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

  private serverAttributes(): Attributes {
    if (this.serverAttrs) return this.serverAttrs;
    const a = this.address();
    if (!a) return {};
    this.serverAttrs = { [ATTR_SERVER_ADDRESS]: a.address, [ATTR_SERVER_PORT]: a.port };
    return this.serverAttrs;
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
    tel.activeCalls?.add(1, labels.base);
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
    tel.activeCalls?.add(-1, this.labels.base);
  }
}
