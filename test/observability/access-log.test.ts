import * as assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { Readable } from "node:stream";
import { closeClient, createClient, createServer, Download, type Logger, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { ProbeService } from "./otel-service.js";

interface Line {
  fields: Record<string, unknown>;
  msg: string;
}

/** A logger that keeps its info lines (the access log's), and fails the test on anything else. */
function capturing(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    info: (fields: object, msg: string) => lines.push({ fields: fields as Record<string, unknown>, msg }),
    warn: () => {},
    error: () => {},
  };
}

/** Waits for the access line of a call that just ended (written in the same tick as its answer). */
async function nextLine(log: { lines: Line[] }, count: number): Promise<Line> {
  for (let i = 0; i < 50 && log.lines.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(log.lines.length, count, JSON.stringify(log.lines));
  return log.lines[count - 1]!;
}

/** Sends raw bytes on a new connection and resolves with what came back. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => s.write(bytes));
    let got = "";
    s.on("data", (d) => (got += d.toString("latin1")));
    s.on("end", () => resolve(got));
    s.on("close", () => resolve(got));
    s.on("error", reject);
  });
}

describe("the access log", () => {
  const log = capturing();
  let server: TripleServer;
  let url: string;
  before(async () => {
    server = createServer({ services: [new ProbeService()], accessLog: log, limits: { maxBodyBytes: 64, maxHeaderCount: 20 } });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(() => server.close());

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

  it("one line per call: method, path, protocol, status, code, duration, bytes, peer", async () => {
    const n = log.lines.length;
    const r = await post("/otel.Probe/hello", '["log"]');
    assert.equal(await r.json(), "hello log");
    const { fields, msg } = await nextLine(log, n + 1);
    assert.equal(fields.method, "POST");
    assert.equal(fields.path, "/otel.Probe/hello");
    assert.equal(fields.protocol, "triple");
    assert.equal(fields.status, 200);
    assert.equal(fields.code, "ok");
    assert.equal(fields.bytesIn, 7);
    assert.equal(fields.bytesOut, Buffer.byteLength('"hello log"'));
    assert.ok(typeof fields.durationMs === "number" && fields.durationMs >= 0);
    assert.match(String(fields.peer), /^127\.0\.0\.1:\d+$/);
    assert.match(msg, /^POST \/otel\.Probe\/hello triple 200 ok [\d.]+ms$/);
  });

  it("gRPC calls too, with their code", async () => {
    const n = log.lines.length;
    const c = createClient(ProbeService, { providers: [url], protocol: "grpc", retries: 0 });
    try {
      await c.hello("g");
      await c.boom("x").catch(() => {});
    } finally {
      closeClient(c);
    }
    await nextLine(log, n + 2);
    const [ok, failed] = log.lines.slice(n).map((l) => l.fields);
    assert.deepEqual([ok!.protocol, ok!.status, ok!.code, ok!.path], ["grpc", 200, "ok", "/otel.Probe/hello"]);
    assert.deepEqual([failed!.protocol, failed!.status, failed!.code], ["grpc", 200, "unknown"]);
  });

  const refusals: [string, number, string, () => Promise<unknown>][] = [
    ["an unknown method", 404, "unimplemented", () => post("/otel.Probe/nope", "[]")],
    ["an unsupported content type", 415, "internal", () => post("/otel.Probe/hello", "[]", { "content-type": "application/x-nope" })],
    ["a body over the limit", 413, "resource_exhausted", () => post("/otel.Probe/hello", JSON.stringify(["x".repeat(200)]))],
    [
      "too many headers",
      431,
      "resource_exhausted",
      () => post("/otel.Probe/hello", "[]", Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`x-h${i}`, "v"]))),
    ],
  ];
  for (const [what, status, code, send] of refusals) {
    it(`a call refused before its handler: ${what} (${status})`, async () => {
      const n = log.lines.length;
      const r = (await send()) as Response;
      assert.equal(r.status, status);
      await r.arrayBuffer();
      const { fields } = await nextLine(log, n + 1);
      assert.equal(fields.status, status);
      assert.equal(fields.code, code);
      assert.equal(fields.method, "POST");
      assert.equal(fields.bytesIn, 0);
      assert.ok((fields.bytesOut as number) > 0);
      assert.match(String(fields.peer), /^127\.0\.0\.1:\d+$/);
    });
  }

  it("a request the server could not parse (400)", async () => {
    const n = log.lines.length;
    const reply = await raw(server.address!.port, "GARBAGE\r\n\r\n");
    assert.match(reply, /^HTTP\/1\.1 400/);
    const { fields } = await nextLine(log, n + 1);
    assert.equal(fields.status, 400);
    assert.equal(fields.protocol, "triple");
    assert.equal(fields.code, "invalid_argument");
  });
});

const CHUNK = 256 * 1024;
const CHUNKS = 32;

/** A download streamed after its handler returned: 8 MiB in 32 chunks, 5 ms apart. */
@Service("log.Files")
class Files {
  @Method({ returns: Download })
  async fetch(): Promise<Download> {
    async function* chunks() {
      for (let i = 0; i < CHUNKS; i++) {
        await new Promise((r) => setTimeout(r, 5));
        yield Buffer.alloc(CHUNK, 97);
      }
    }
    return new Download(Readable.from(chunks()), { filename: "big.bin" });
  }

  @Method()
  async hello(@Param("name") name: string): Promise<string> {
    return `hello ${name}`;
  }
}

describe("the access log of responses that outlive their handler, and of refusals by the binder", () => {
  const log = capturing();
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new Files()], accessLog: log });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("a download is logged once sent, with every byte and the time it took", async () => {
    const n = log.lines.length;
    const r = await fetch(`${server.url}/log.Files/fetch`, { method: "POST", headers: { "content-type": "application/json" }, body: "[]" });
    assert.equal(r.status, 200);
    // Headers are in, the body still streaming: no line yet.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(log.lines.length, n, JSON.stringify(log.lines.slice(n)));
    assert.equal((await r.arrayBuffer()).byteLength, CHUNK * CHUNKS);
    const { fields } = await nextLine(log, n + 1);
    assert.equal(fields.status, 200);
    assert.equal(fields.code, "ok");
    assert.equal(fields.bytesOut, CHUNK * CHUNKS);
    assert.ok((fields.durationMs as number) >= 100, `durationMs ${fields.durationMs}: 32 chunks 5 ms apart`);
  });

  it("a binder 400 is logged with the error body's bytes", async () => {
    const n = log.lines.length;
    const r = await fetch(`${server.url}/log.Files/hello`, { method: "POST", headers: { "content-type": "application/json" }, body: '[{"a":1}]' });
    assert.equal(r.status, 400);
    const body = Buffer.from(await r.arrayBuffer());
    const { fields } = await nextLine(log, n + 1);
    assert.equal(fields.status, 400);
    assert.equal(fields.code, "invalid_argument");
    assert.equal(fields.bytesOut, body.byteLength);
    assert.ok(body.byteLength > 0);
  });
});

describe("accessLog: true", () => {
  it("writes pino-shaped JSON lines to stdout; without the option nothing is written", async () => {
    const written: string[] = [];
    const original = process.stdout.write;
    const servers = [createServer({ services: [new ProbeService()], accessLog: true }), createServer({ services: [new ProbeService()] })];
    for (const s of servers) await s.listen({ port: 0 });
    process.stdout.write = ((chunk: string) => written.push(String(chunk)) > 0) as typeof process.stdout.write;
    try {
      for (const s of servers) {
        const r = await fetch(`${s.url}/otel.Probe/hello`, { method: "POST", headers: { "content-type": "application/json" }, body: '["json"]' });
        await r.json();
      }
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.stdout.write = original;
      for (const s of servers) await s.close();
    }
    // The test runner writes its own reports to stdout too (not JSON lines).
    const lines = written.filter((w) => w.startsWith('{"level":'));
    assert.equal(lines.length, 1, lines.join(""));
    assert.ok(lines[0]!.endsWith("\n") && lines[0]!.indexOf("\n") === lines[0]!.length - 1);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.level, 30);
    assert.ok(Math.abs(line.time - Date.now()) < 10_000);
    assert.match(line.msg, /^POST \/otel\.Probe\/hello triple 200 ok/);
    assert.equal(line.path, "/otel.Probe/hello");
    assert.equal(line.status, 200);
  });
});
