// The browser side of test/browser/connect-web.test.ts, bundled with esbuild: @connectrpc/connect-web's
// Connect (JSON and binary) and gRPC-Web transports calling the greet sample cross-origin.
// Plain JavaScript (the repository's tsc has no DOM types); results are JSON-serialisable.
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { runGrpcWebJs } from "./grpc-web-page.mjs";

// A named import: the package's `sideEffects` list would let esbuild drop a bare `import "…"`.
window.runGrpcWebJs = runGrpcWebJs;

function registryOf(setBase64) {
  const bytes = Uint8Array.from(atob(setBase64), (c) => c.charCodeAt(0));
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
}

async function settle(run) {
  try {
    return { value: await run() };
  } catch (e) {
    const err = ConnectError.from(e);
    return { error: { code: err.code, message: err.rawMessage }, err };
  }
}

const TRANSPORTS = {
  "Connect JSON": (baseUrl) => createConnectTransport({ baseUrl }),
  "Connect binary": (baseUrl) => createConnectTransport({ baseUrl, useBinaryFormat: true }),
  "gRPC-Web binary": (baseUrl) => createGrpcWebTransport({ baseUrl }),
};

async function runOne(client, errorInfo, getClient) {
  const out = {};
  out.unary = await settle(async () => (await client.greet({ name: "triple" })).greeting);
  out.wrongName = await settle(async () => (await client.greet({ name: "nobody" })).greeting);
  delete out.wrongName.err;
  out.serverStream = await settle(async () => {
    const got = [];
    for await (const r of client.greetServerStream({ name: "web" })) got.push(r.greeting);
    return got;
  });
  const details = await settle(async () => (await client.greetWithDetails({ name: "nobody" })).greeting);
  if (details.err) {
    details.error.details = details.err.findDetails(errorInfo).map((d) => ({ reason: d.reason, domain: d.domain, metadata: { ...d.metadata } }));
    delete details.err;
  }
  out.details = details;
  const started = performance.now();
  out.deadline = await settle(async () => (await client.greetSlowly({ name: "s", delayMs: 5000 }, { timeoutMs: 300 })).greeting);
  delete out.deadline.err;
  out.deadline.ms = Math.round(performance.now() - started);
  if (getClient) {
    let cacheControl = null;
    out.get = await settle(async () => (await getClient.greetCached({ name: "get" }, { onHeader: (h) => (cacheControl = h.get("cache-control")) })).greeting);
    delete out.get.err;
    out.get.cacheControl = cacheControl;
  }
  return out;
}

/** Calls the sample through every connect-web transport; `setBase64` is a FileDescriptorSet. */
window.runConnectWeb = async (baseUrl, setBase64) => {
  const registry = registryOf(setBase64);
  const service = registry.getService("greet.GreetService");
  const errorInfo = registry.getMessage("google.rpc.ErrorInfo");
  const results = {};
  for (const [name, make] of Object.entries(TRANSPORTS)) {
    const client = createClient(service, make(baseUrl));
    const getClient = name.startsWith("Connect")
      ? createClient(service, createConnectTransport({ baseUrl, useHttpGet: true, useBinaryFormat: name.endsWith("binary") }))
      : undefined;
    results[name] = await runOne(client, errorInfo, getClient);
  }
  return results;
};
