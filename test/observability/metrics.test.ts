import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import { type DataPoint, DataPointType, type Sum } from "@opentelemetry/sdk-metrics";
import { closeClient, Code, createClient, createServer, type RpcError, type TripleServer } from "../../src/index.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, histogramPoints, metricNamed, waitForSpans } from "./sdk.js";

const QUIET = { info() {}, warn() {}, error() {} };

// Explicit providers, nothing registered globally: the options path.
describe("OpenTelemetry metrics (explicit tracerProvider / meterProvider options)", () => {
  const sdk = createSdk();
  const telemetry = { tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider };
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new ProbeService()], telemetry, logger: QUIET });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("N calls give N duration points in seconds per side, labelled by method and status", async () => {
    const N = 7;
    const grpc = createClient(ProbeService, { providers: [server.url], protocol: "grpc", telemetry, retries: 0 });
    const http = createClient(ProbeService, { providers: [server.url], httpVersion: "1.1", telemetry, retries: 0 });
    try {
      for (let i = 0; i < N; i++) await grpc.hello(`n${i}`);
      await assert.rejects(http.fail(Code.NotFound), (e: RpcError) => e.code === Code.NotFound);
    } finally {
      closeClient(grpc);
      closeClient(http);
    }
    await waitForSpans(sdk, N + 1, (s) => s.kind === SpanKind.SERVER);

    const serverDuration = await metricNamed(sdk, "rpc.server.call.duration");
    assert.equal(serverDuration?.descriptor.unit, "s");
    assert.equal(serverDuration?.dataPointType, DataPointType.HISTOGRAM);
    const points = histogramPoints(serverDuration);
    const ok = points.find((p) => p.attributes["rpc.method"] === "otel.Probe/hello");
    assert.deepEqual(ok?.attributes, { "rpc.system.name": "grpc", "rpc.method": "otel.Probe/hello", "rpc.status_code": "OK" });
    assert.equal(ok?.value.count, N);
    assert.ok((ok?.value.sum ?? 0) > 0 && (ok?.value.sum ?? 1) < N, `durations in seconds: sum ${ok?.value.sum}`);
    assert.deepEqual(ok?.value.buckets.boundaries, [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]);
    const notFound = points.find((p) => p.attributes["rpc.method"] === "otel.Probe/fail");
    assert.deepEqual(notFound?.attributes, { "rpc.system.name": "dubbo", "rpc.method": "otel.Probe/fail", "rpc.status_code": "NOT_FOUND" });

    const clientPoints = histogramPoints(await metricNamed(sdk, "rpc.client.call.duration"));
    const clientOk = clientPoints.find((p) => p.attributes["rpc.method"] === "otel.Probe/hello");
    assert.equal(clientOk?.value.count, N);
    const clientFail = clientPoints.find((p) => p.attributes["rpc.method"] === "otel.Probe/fail");
    assert.equal(clientFail?.attributes["error.type"], "NOT_FOUND", "every non-OK code is an error on the client");

    const req = histogramPoints(await metricNamed(sdk, "rpc.server.request.size")).find((p) => p.attributes["rpc.method"] === "otel.Probe/hello");
    assert.equal(req?.value.count, N);
    assert.ok((req?.value.min ?? 0) > 0);
    const res = histogramPoints(await metricNamed(sdk, "rpc.server.response.size")).find((p) => p.attributes["rpc.method"] === "otel.Probe/hello");
    assert.equal(res?.value.count, N);

    const active = await metricNamed(sdk, "rpc.server.active_calls");
    for (const p of (active?.dataPoints ?? []) as DataPoint<Sum>[]) assert.equal(p.value, 0, "no call in progress");
    assert.ok((active?.dataPoints.length ?? 0) > 0);
  });

  it("a stream's messages are counted one by one", async () => {
    const grpc = createClient(ProbeService, { providers: [server.url], protocol: "grpc", telemetry, retries: 0 });
    try {
      const got: number[] = [];
      for await (const i of grpc.count(3)) got.push(i);
      assert.deepEqual(got, [1, 2, 3]);
    } finally {
      closeClient(grpc);
    }
    await waitForSpans(sdk, 1, (s) => s.name === "otel.Probe/count" && s.kind === SpanKind.SERVER);
    const res = histogramPoints(await metricNamed(sdk, "rpc.server.response.size")).find((p) => p.attributes["rpc.method"] === "otel.Probe/count");
    assert.equal(res?.value.count, 3);
  });
});
