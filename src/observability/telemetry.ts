// Owns `TelemetrySwitch`. Decides whether calls are observed, cheaply: `on()` is a field read once
// tracing and metrics are both on. Must not change: the OpenTelemetry names, and no cost per call
// when telemetry is off.
import {
  createNoopMeter,
  type Meter,
  type MeterProvider,
  metrics,
  propagation,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { VERSION } from "../protocol/version.js";
import { SCOPE_NAME } from "./semconv.js";

/**
 * OpenTelemetry settings of a server or client. Without any, the global providers and
 * propagator are used (whatever an SDK registered); with no SDK registered, telemetry costs one
 * boolean check per call.
 */
export interface TelemetryOptions {
  /** Where spans go; default the global tracer provider. */
  tracerProvider?: TracerProvider;
  /** Where metrics go; default the global meter provider. */
  meterProvider?: MeterProvider;
  /** How trace context and baggage travel in headers; default the global propagator. */
  propagator?: TextMapPropagator;
  /** False turns telemetry off for this server or client even when an SDK is registered. Default true. */
  enabled?: boolean;
}

/** How a propagator is called: the global `propagation` API and a `TextMapPropagator` alike. */
export type Propagation = Pick<TextMapPropagator, "inject" | "extract">;

/** While telemetry is off, how many calls pass between two looks at the global providers. */
const RECHECK_EVERY_CALLS = 128;

/** The real tracer behind a provider, or undefined for the API's proxy without an SDK behind it. */
function tracerOf(provider: TracerProvider): Tracer | undefined {
  const proxy = provider as Partial<{ getDelegateTracer(name: string, version?: string): Tracer | undefined }>;
  if (typeof proxy.getDelegateTracer === "function") return proxy.getDelegateTracer(SCOPE_NAME, VERSION);
  return provider.getTracer(SCOPE_NAME, VERSION);
}

/**
 * Decides whether calls are observed, cheaply: `on()` is a field read once tracing and metrics
 * are both on. Until then it looks at the providers on the first call and every
 * {@link RECHECK_EVERY_CALLS} calls after, so an SDK registered after the server or client was
 * made is picked up. Tracing is on when a `tracerProvider` was given or the global one has an
 * SDK behind it; metrics when a `meterProvider` was given or the global one is not the API's
 * no-op (the meter is fetched only then: the API's no-op meter would stay a no-op forever).
 */
export abstract class TelemetrySwitch {
  /** The tracer while tracing is on. */
  tracer: Tracer | undefined = undefined;
  readonly propagation: Propagation;
  private active = false;
  private complete = false;
  private countdown = 1;
  private meterFrom: MeterProvider | undefined = undefined;

  constructor(protected readonly options: TelemetryOptions = {}) {
    this.propagation = options.propagator ?? propagation;
    if (options.enabled === false) this.complete = true;
  }

  /** True when this call is to be observed. */
  on(): boolean {
    if (this.complete) return this.active;
    if (--this.countdown <= 0) {
      this.countdown = RECHECK_EVERY_CALLS;
      this.refresh();
    }
    return this.active;
  }

  private refresh(): void {
    const o = this.options;
    this.tracer ??= tracerOf(o.tracerProvider ?? trace.getTracerProvider());
    const mp = o.meterProvider ?? metrics.getMeterProvider();
    if (mp !== this.meterFrom) {
      const meter = mp.getMeter(SCOPE_NAME, VERSION);
      if (meter !== createNoopMeter()) {
        this.meterFrom = mp;
        this.createInstruments(meter);
      }
    }
    this.active = this.tracer !== undefined || this.meterFrom !== undefined;
    this.complete = this.tracer !== undefined && this.meterFrom !== undefined;
  }

  /** Creates the metric instruments from the meter (once metrics are on). */
  protected abstract createInstruments(meter: Meter): void;
}
