// Owns `ClientTelemetry`, `ClientCallObserver`. A client's tracer and instruments; `start()` begins
// one call's ClientCallObserver. Must not change: the OpenTelemetry names, and no cost per call
// when telemetry is off.
import type { OutgoingHttpHeaders } from "node:http";
import { type Context, context, defaultTextMapSetter, type Histogram, type Meter, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Attempt } from "../runtime/invocation.js";
import type { Provider } from "../transport/client/provider.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { LabelCache, type MethodLabels } from "./labels.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_RPC_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  DURATION_BUCKETS,
  METRIC_CLIENT_CALL_DURATION,
  rpcSystemOf,
} from "./semconv.js";
import { TelemetrySwitch } from "./telemetry.js";

/** A client's tracer and instruments; `start()` begins one call's {@link ClientCallObserver}. */
export class ClientTelemetry extends TelemetrySwitch {
  duration: Histogram | undefined = undefined;
  private readonly labels = new LabelCache();

  protected createInstruments(meter: Meter): void {
    this.duration = meter.createHistogram(METRIC_CLIENT_CALL_DURATION, {
      description: "Duration of client calls, all attempts included.",
      unit: "s",
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    });
  }

  /** Starts observing a call of `md` in `protocol` (the client's wire protocol for the method). */
  start(md: MethodDescriptor, protocol: string): ClientCallObserver {
    return new ClientCallObserver(this, this.labels.of(md, rpcSystemOf(protocol)));
  }
}

/**
 * One client call's CLIENT span (one for the whole call, every attempt included, as the RPC
 * conventions say) and its duration. The span's context travels in the request headers
 * (`traceparent`, `tracestate`, `baggage`); an attempt that fails and is retried is an
 * `rpc.attempt.failed` event on the span, and `server.address` / `server.port` name the
 * provider of the last attempt.
 */
export class ClientCallObserver {
  private readonly start = performance.now();
  private readonly span: Span | undefined;
  private readonly context: Context;
  private ended = false;

  constructor(
    private readonly tel: ClientTelemetry,
    private readonly labels: MethodLabels,
  ) {
    const parent = context.active();
    const tracer = tel.tracer;
    this.span = tracer?.startSpan(labels.name, { kind: SpanKind.CLIENT, attributes: labels.base }, parent);
    this.context = this.span ? trace.setSpan(parent, this.span) : parent;
  }

  /** The call's headers with its trace context and baggage added (a copy; `headers` stays as it is). */
  inject(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
    if (this.span === undefined) return headers;
    const h: OutgoingHttpHeaders = { ...headers };
    this.tel.propagation.inject(this.context, h, defaultTextMapSetter);
    return h;
  }

  /** The attempt, recording on the span which provider each try went to and how it failed. */
  attempts<T>(attempt: Attempt<T>): Attempt<T> {
    const span = this.span;
    if (span === undefined) return attempt;
    return (p) => {
      span.setAttributes({ [ATTR_SERVER_ADDRESS]: p.host, [ATTR_SERVER_PORT]: p.port });
      return attempt(p).catch((e: unknown) => {
        this.attemptFailed(span, p, e);
        throw e;
      });
    };
  }

  private attemptFailed(span: Span, p: Provider, e: unknown): void {
    const code = e instanceof RpcError ? e.code : Code.Unknown;
    span.addEvent("rpc.attempt.failed", {
      [ATTR_SERVER_ADDRESS]: p.host,
      [ATTR_SERVER_PORT]: p.port,
      [ATTR_RPC_STATUS_CODE]: this.labels.status(code),
      "exception.message": e instanceof Error ? e.message : String(e),
    });
  }

  /** The call ended: `error` undefined for OK, else what the caller gets. Later calls do nothing. */
  end(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const code = error === undefined ? Code.OK : error instanceof RpcError ? error.code : Code.Unknown;
    const failed = code !== Code.OK;
    const span = this.span;
    if (span !== undefined) {
      const status = this.labels.status(code);
      span.setAttribute(ATTR_RPC_STATUS_CODE, status);
      if (failed) {
        span.setAttribute(ATTR_ERROR_TYPE, error instanceof RpcError ? status : ((error as Error)?.name ?? status));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      span.end();
    }
    this.tel.duration?.record((performance.now() - this.start) / 1000, this.labels.withStatus(code, failed));
  }
}
