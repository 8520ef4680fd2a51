// A server in its own process, with the SDK registered there: started by two-process.test.ts.
// Prints {"port"} once listening; on the line "dump" on stdin, prints its finished spans as one
// JSON line, closes and exits.
import { createInterface } from "node:readline";
import { createServer } from "../../src/index.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, registerGlobally } from "./sdk.js";

const sdk = createSdk();
registerGlobally(sdk);

async function main(): Promise<void> {
  const server = createServer({ services: [new ProbeService()] });
  const { port } = await server.listen({ port: 0 });
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() !== "dump") continue;
    const spans = sdk.spans.getFinishedSpans().map((s) => ({
      name: s.name,
      kind: s.kind,
      traceId: s.spanContext().traceId,
      spanId: s.spanContext().spanId,
      parentSpanId: s.parentSpanContext?.spanId,
      attributes: s.attributes,
    }));
    process.stdout.write(`${JSON.stringify({ spans })}\n`);
    await server.close();
    process.exit(0);
  }
}

void main();
