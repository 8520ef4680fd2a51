import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  type MetricData,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

/** The real SDK with in-memory exporters, as an application would wire it (tests read what it caught). */
export interface TestSdk {
  readonly spans: InMemorySpanExporter;
  readonly tracerProvider: BasicTracerProvider;
  readonly meterProvider: MeterProvider;
  readonly reader: PeriodicExportingMetricReader;
}

/** Builds the SDK: in-memory span exporter, in-memory metric reader (collected on demand). */
export function createSdk(): TestSdk {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 60_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return { spans, tracerProvider, meterProvider, reader };
}

/** Registers the SDK globally: providers, W3C trace context + baggage, AsyncLocalStorage context. */
export function registerGlobally(sdk: TestSdk): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  trace.setGlobalTracerProvider(sdk.tracerProvider);
  metrics.setGlobalMeterProvider(sdk.meterProvider);
}

/** Waits until `n` spans (matching `filter`) have ended, then returns them. */
export async function waitForSpans(sdk: TestSdk, n: number, filter: (s: ReadableSpan) => boolean = () => true): Promise<ReadableSpan[]> {
  for (let i = 0; i < 200; i++) {
    const found = sdk.spans.getFinishedSpans().filter(filter);
    if (found.length >= n) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  const names = sdk.spans.getFinishedSpans().map((s) => `${s.name} (${s.kind})`);
  throw new Error(`expected ${n} spans, have: ${names.join(", ")}`);
}

/** One metric by name, from a fresh collection. */
export async function metricNamed(sdk: TestSdk, name: string): Promise<MetricData | undefined> {
  const { resourceMetrics } = await sdk.reader.collect();
  for (const sm of resourceMetrics.scopeMetrics) {
    for (const m of sm.metrics) if (m.descriptor.name === name) return m;
  }
  return undefined;
}

/** The histogram points of a metric. */
export function histogramPoints(m: MetricData | undefined): DataPoint<Histogram>[] {
  return (m?.dataPoints ?? []) as DataPoint<Histogram>[];
}
