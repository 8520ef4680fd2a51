// The server of bench/telemetry.mjs: the greet sample's service, with or without an OpenTelemetry
// SDK registered. `node bench/telemetry-server.mjs <mode> <port> [dist]`; prints "ready".
//   none: no SDK (the API alone, as a user who never wires OpenTelemetry runs it).
//   sdk:  the real SDK as production wires it, exporting nowhere: BasicTracerProvider (every call
//         sampled) with a BatchSpanProcessor and a no-op exporter, a MeterProvider whose reader
//         exports to a no-op exporter every 60 s, W3C trace context + baggage, AsyncLocalStorage.
//   sdk+<flag>+…: the same with changes: `traces` (no meter provider), `metrics` (no tracer
//         provider), `nosizes` (telemetry: { messageSizes: false }), `sample10` (10 % of traces
//         sampled, parent-based), `off` (telemetry: { enabled: false }: the SDK's own cost, the
//         AsyncLocalStorage context manager above all, without our instrumentation), `noctx` (no
//         context manager: what AsyncLocalStorage costs; handlers' spans would not nest).
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const [, , mode, port, dist = "dist"] = process.argv;
const root = path.resolve(here, "..", dist);
const flags = new Set(mode.split("+").slice(1));

async function registerSdk() {
  const { context, metrics, propagation, trace } = await import("@opentelemetry/api");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator, ExportResultCode } = await import("@opentelemetry/core");
  const tb = await import("@opentelemetry/sdk-trace-base");
  const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import("@opentelemetry/sdk-metrics");
  const noop = {
    export: (_items, done) => done({ code: ExportResultCode.SUCCESS }),
    shutdown: async () => {},
    forceFlush: async () => {},
    selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
  };
  if (!flags.has("noctx")) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  if (!flags.has("metrics")) {
    const sampler = flags.has("sample10") ? new tb.ParentBasedSampler({ root: new tb.TraceIdRatioBasedSampler(0.1) }) : undefined;
    trace.setGlobalTracerProvider(new tb.BasicTracerProvider({ sampler, spanProcessors: [new tb.BatchSpanProcessor(noop)] }));
  }
  if (!flags.has("traces")) {
    const reader = new PeriodicExportingMetricReader({ exporter: noop, exportIntervalMillis: 60_000 });
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  }
}

if (mode.startsWith("sdk")) await registerSdk();
else if (mode !== "none") {
  console.error("usage: telemetry-server.mjs <none|sdk[+traces|+metrics|+nosizes|+sample10|+off|+noctx]> <port> [dist]");
  process.exit(2);
}

const { createServer } = await import(pathToFileURL(path.join(root, "src", "index.js")).href);
const { GreetServiceImpl } = await import(pathToFileURL(path.join(root, "samples", "greet", "greet-service.js")).href);
const telemetry = flags.has("nosizes") ? { messageSizes: false } : flags.has("off") ? { enabled: false } : undefined;
const server = createServer({ services: [new GreetServiceImpl("triple")], telemetry });
await server.listen({ port: Number(port), host: "127.0.0.1" });
console.log("ready");
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
