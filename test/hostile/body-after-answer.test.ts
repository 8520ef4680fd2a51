import * as assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createHandler } from "../../src/index.js";
import { ServerChild } from "../robustness/child.js";
import { Bystander } from "./attack.js";

// Issue 33, break 8: a gRPC-Web (binary or text), Connect stream or gRPC request whose first
// frame announces 2 GiB was answered resource_exhausted at once, then the server went on reading
// whatever the client sent (1.3 GiB in 3 s over HTTP/1.1, 2.4 GiB over HTTP/2, endless). A JSON
// body over the limit was already cut: 413, `Connection: close`, a bounded linger. Now every
// answer given while the request body is still arriving stops the reading: HTTP/1.1 closes the
// connection after a linger of at most 64 MiB / 5 s, HTTP/2 resets the stream (NO_ERROR) once
// the answer is out, trailers included.

/** A frame header announcing 2 GiB. */
const HUGE_FRAME = Buffer.from([0, 0x80, 0, 0, 0]);
const CHUNK = Buffer.alloc(64 * 1024);
/**
 * How long an attack runs at most: before the fix the server never stopped reading. An HTTP/1.1
 * linger ends at 64 MiB or after 5 s, whichever comes first (on a loaded machine, the 5 s).
 */
const ATTACK_MS = 7_000;
/** HTTP/2 resets the stream as soon as the answer is out: a shorter bound. */
const ATTACK_H2_MS = 3_000;
/** What a lingering HTTP/1.1 close may still read (64 MiB), plus the sockets' buffers. */
const H1_BOUND = 72 * 1024 * 1024;
/** What an HTTP/2 stream may take before its reset arrives: its window, the connection's and buffers. */
const H2_BOUND = 16 * 1024 * 1024;

interface Flood {
  /** The start of the answer (status line, or `:status` and `grpc-status`). */
  answer: string;
  /** Bytes the client got written after the answer arrived. */
  afterAnswer: number;
  /** Ms from the answer to the server ending the request (undefined: it never did). */
  endedAfterMs: number | undefined;
}

interface Case {
  readonly name: string;
  readonly path: string;
  readonly contentType: string;
  readonly text?: boolean;
  /** What the answer must show. */
  readonly answer: RegExp;
}

const CASES: readonly Case[] = [
  { name: "gRPC-Web binary", path: "/greet.GreetService/Greet", contentType: "application/grpc-web+proto", answer: /200[\s\S]*grpc-status:? ?8/ },
  { name: "gRPC-Web text", path: "/greet.GreetService/Greet", contentType: "application/grpc-web-text", text: true, answer: /200[\s\S]*grpc-status:? ?8/ },
  {
    name: "Connect server stream",
    path: "/greet.GreetService/GreetServerStream",
    contentType: "application/connect+proto",
    answer: /200[\s\S]*resource_exhausted/,
  },
];

function firstBytes(c: Case): Buffer {
  return c.text ? Buffer.from(HUGE_FRAME.toString("base64")) : HUGE_FRAME;
}

/**
 * HTTP/1.1, as a hostile client: headers announcing 2 GiB, the huge frame, then zeros as fast as
 * the server takes them, ignoring the server's FIN (half-open), until the server closes.
 */
function floodH1(port: number, c: Case): Promise<Flood> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    let answer = "";
    let answeredAt = 0;
    let written = 0;
    let writtenAtAnswer = 0;
    const fill = c.text ? Buffer.alloc(CHUNK.length, 65) : CHUNK;
    const pump = () => {
      while (!socket.destroyed && socket.write(fill)) written += fill.length;
    };
    socket.on("connect", () => {
      socket.write(`POST ${c.path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${c.contentType}\r\nContent-Length: ${2 ** 31 + 5}\r\n\r\n`);
      socket.write(firstBytes(c));
      pump();
    });
    socket.on("drain", () => {
      written += fill.length;
      pump();
    });
    socket.on("data", (d: Buffer) => {
      if (answeredAt === 0) {
        answeredAt = Date.now();
        writtenAtAnswer = written;
      }
      if (answer.length < 4096) answer += d.toString("latin1");
    });
    socket.on("error", () => {});
    const done = (ended: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({
        answer,
        afterAnswer: answeredAt ? written - writtenAtAnswer : written,
        endedAfterMs: ended && answeredAt ? Date.now() - answeredAt : undefined,
      });
    };
    const timer = setTimeout(() => done(false), ATTACK_MS);
    socket.on("close", () => done(true));
  });
}

/** HTTP/2: one stream writing the huge frame then zeros until the server ends the stream. */
function floodH2(url: string, c: Case, first?: Buffer): Promise<Flood> {
  return new Promise((resolve) => {
    const session = http2.connect(url);
    session.on("error", () => {});
    const req = session.request({ ":method": "POST", ":path": c.path, "content-type": c.contentType, te: "trailers" });
    let answer = "";
    let answeredAt = 0;
    let written = 0;
    let writtenAtAnswer = 0;
    const note = (h: http2.IncomingHttpHeaders) => {
      answer += `${h[":status"] ?? ""} grpc-status ${h["grpc-status"] ?? ""} `;
    };
    req.on("response", (h) => {
      answeredAt = Date.now();
      writtenAtAnswer = written;
      note(h);
    });
    req.on("trailers", note);
    req.on("data", (d: Buffer) => {
      if (answer.length < 4096) answer += d.toString("latin1");
    });
    req.on("error", () => {});
    const fill = c.text ? Buffer.alloc(CHUNK.length, 65) : CHUNK;
    const pump = () => {
      while (!req.destroyed && !req.closed && req.write(fill)) written += fill.length;
    };
    req.on("drain", () => {
      written += fill.length;
      pump();
    });
    const start = () => {
      req.write(firstBytes(c));
      pump();
    };
    if (first) {
      // A first good message; the huge frame once its answer started (response headers sent).
      req.write(first);
      req.once("data", start);
    } else start();
    const done = (ended: boolean) => {
      clearTimeout(timer);
      session.destroy();
      resolve({
        answer,
        afterAnswer: answeredAt ? written - writtenAtAnswer : written,
        endedAfterMs: ended && answeredAt ? Date.now() - answeredAt : undefined,
      });
    };
    const timer = setTimeout(() => done(false), ATTACK_H2_MS);
    req.on("close", () => done(true));
  });
}

function assertStopped(f: Flood, c: Case, bound: number, what: string): void {
  assert.match(f.answer, c.answer, `${what}: answer ${JSON.stringify(f.answer.slice(0, 300))}`);
  const mib = (f.afterAnswer / 1048576).toFixed(1);
  assert.ok(f.endedAfterMs !== undefined, `${what}: the server still read after its answer (${mib} MiB before the test gave up)`);
  assert.ok(f.afterAnswer < bound, `${what}: ${mib} MiB taken after the answer`);
}

describe("hostile: request bodies are not read after the answer (issue 33, break 8)", () => {
  let server: ServerChild;
  before(async () => {
    server = await ServerChild.start();
  });
  after(() => server?.stop());

  for (const c of CASES) {
    it(`HTTP/1.1 ${c.name}, first frame of 2 GiB: answered, then the connection closes (linger bounded)`, async () => {
      const bystander = new Bystander(server.url);
      const f = await floodH1(server.port, c);
      assertStopped(f, c, H1_BOUND, c.name);
      await bystander.assertResponsive(2_000);
    });

    it(`HTTP/2 ${c.name}, first frame of 2 GiB: answered, then the stream is reset`, async () => {
      const bystander = new Bystander(server.url);
      const f = await floodH2(server.url, c);
      assertStopped(f, c, H2_BOUND, c.name);
      await bystander.assertResponsive(2_000);
    });
  }

  it("HTTP/1.1: a client that sends its small chunked body only after the early answer keeps its connection", async () => {
    // As connect-node does: headers first, the body once the response is under way.
    const socket = net.connect({ port: server.port, host: "127.0.0.1" });
    socket.on("error", () => {});
    let data = "";
    socket.on("data", (d: Buffer) => {
      data += d.toString("latin1");
    });
    const waitData = async (re: RegExp) => {
      const end = Date.now() + 3_000;
      while (!re.test(data) && !socket.destroyed && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      return re.test(data);
    };
    try {
      await new Promise((r) => socket.once("connect", r));
      socket.write("POST /no.Such/Method HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      assert.ok(await waitData(/^HTTP\/1\.1 404[\s\S]*\r\n\r\n[\s\S]*unimplemented/), data);
      await new Promise((r) => setTimeout(r, 50));
      socket.write("2\r\n{}\r\n0\r\n\r\n");
      data = "";
      socket.write('POST /greet.GreetService/Greet HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"name":"triple"}');
      assert.ok(await waitData(/^HTTP\/1\.1 200[\s\S]*\{"greeting":"triple"\}/), `second request on the connection: ${JSON.stringify(data)}`);
    } finally {
      socket.destroy();
    }
  });

  it("gRPC: trailers-only answer, and an answer whose headers were sent (bidi): trailers arrive, then the stream is reset", async () => {
    const bystander = new Bystander(server.url);
    const grpc: Case = { name: "gRPC", path: "/greet.GreetService/Greet", contentType: "application/grpc+proto", answer: /grpc-status 8/ };
    assertStopped(await floodH2(server.url, grpc), grpc, H2_BOUND, "gRPC unary");
    const bidi: Case = { ...grpc, path: "/greet.GreetService/GreetStream" };
    const f = await floodH2(server.url, bidi, Buffer.from([0, 0, 0, 0, 3, 0x0a, 1, 0x61]));
    assertStopped(f, bidi, H2_BOUND, "gRPC bidi");
    assert.match(f.answer, /^200 grpc-status {2}[\s\S]* grpc-status 8 $/, "the trailers came after the response headers");
    await bystander.assertResponsive(2_000);
    await server.assertHealthy();
  });
});

describe("hostile: a mounted handler stops reading after its answer too (issue 33, break 8)", () => {
  let h1: http.Server;
  let h2: http2.Http2Server;
  let port1: number;
  let url2: string;
  before(async () => {
    const handler = createHandler({ services: [new GreetServiceImpl()] });
    h1 = http.createServer(handler);
    h2 = http2.createServer(handler);
    await Promise.all([new Promise<void>((r) => h1.listen(0, "127.0.0.1", r)), new Promise<void>((r) => h2.listen(0, "127.0.0.1", r))]);
    port1 = (h1.address() as AddressInfo).port;
    url2 = `http://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  });
  after(() => {
    h1.closeAllConnections();
    h1.close();
    h2.close();
  });

  it("createHandler in node:http and node:http2: gRPC-Web binary with a 2 GiB frame is cut after the answer", async () => {
    const c = CASES[0];
    assertStopped(await floodH1(port1, c), c, H1_BOUND, "node:http");
    assertStopped(await floodH2(url2, c), c, H2_BOUND, "node:http2");
  });
});
