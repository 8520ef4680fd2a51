#!/usr/bin/env node
// Per-call CPU of the server's telemetry alone, in one process, without sockets: what
// ServerCore.track / invokeHandler / untrack add to a call (observe, run the handler inside the
// span's context, end), so the figure does not move with the load generator or a shared machine.
//
//   npm run build && node bench/telemetry-micro.mjs [none|sdk|sdk+traces|sdk+metrics|sdk+nosizes]
//
// Prints µs per call (best of 5 runs of 200 000 calls). Compare with the server's CPU per unary
// call (~14 µs for Triple JSON over HTTP/1.1 at ~70k req/s on one core).
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const mode = process.argv[2] ?? "sdk";
const flags = new Set(mode.split("+").slice(1));
const dist = path.resolve(here, "..", process.env.DIST ?? "dist");
const load = (p) => import(pathToFileURL(path.join(dist, "src", "observability", p)).href);

if (mode.startsWith("sdk")) {
  const { context, metrics, propagation, trace } = await import("@opentelemetry/api");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator, ExportResultCode } = await import("@opentelemetry/core");
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import("@opentelemetry/sdk-metrics");
  const noop = {
    export: (_items, done) => done({ code: ExportResultCode.SUCCESS }),
    shutdown: async () => {},
    forceFlush: async () => {},
    selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
  };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  if (!flags.has("metrics")) trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noop)] }));
  if (!flags.has("traces")) {
    const reader = new PeriodicExportingMetricReader({ exporter: noop, exportIntervalMillis: 60_000 });
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  }
}

const { ServerTelemetry } = await load("server-observer.js");
const tel = new ServerTelemetry(flags.has("nosizes") ? { messageSizes: false } : undefined, () => ({ address: "127.0.0.1", port: 50051 }));
const md = { serviceName: "greet.GreetService", name: "Greet" };
const ctx = { method: md, protocol: "triple", peer: { address: "127.0.0.1", port: 40000 }, observer: undefined };
const ex = { headers: { "content-type": "application/json", "content-length": "17", host: "127.0.0.1:50051" } };
let sink = 0;
const handler = (a, b) => {
  sink += a + b;
};

function call() {
  // What track(), invokeHandler() and untrack() do for one call.
  if (tel.on()) ctx.observer = tel.observe(ctx, ex);
  const obs = ctx.observer;
  if (obs === undefined) handler(1, 2);
  else {
    obs.received(17);
    obs.within(handler, 1, 2);
    obs.sent(21);
    ctx.observer = undefined;
    obs.end(undefined);
  }
}

const N = 200_000;
let best = Infinity;
for (let run = 0; run < 6; run++) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) call();
  const us = Number(process.hrtime.bigint() - t0) / 1000 / N;
  if (run > 0) best = Math.min(best, us); // run 0 warms up
  await new Promise((r) => setImmediate(r)); // let the batch span processor drain
}
console.log(`${mode}: ${best.toFixed(3)} µs per call (best of 5 x ${N}; sink ${sink > 0})`);
