import * as assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type ClientOptions, Code, closeClient, createClient, createServer, Method, type RpcError, Service, type TripleServer } from "../../src/index.js";
import { NEVER_ABORTS } from "../../src/transport/client/call-scope.js";
import { Provider } from "../../src/transport/client/provider.js";
import { requestMayHaveRun } from "../../src/transport/client/errors.js";
import { Http1Transport } from "../../src/transport/client/http1.js";
import { waitFor } from "../helpers/wait.js";

/** Calls that reached the good provider's handlers. */
let reached = 0;

@Service("t.Retry")
class RetrySvc {
  @Method()
  async charge(): Promise<string> {
    reached++;
    return "charged";
  }

  @Method({ idempotent: true })
  async read(): Promise<string> {
    reached++;
    return "read";
  }
}

type Misbehaviour = (stream: http2.ServerHttp2Stream, session: http2.ServerHttp2Session) => void;

/** An h2c server doing `misbehave` with every stream; counts the streams it saw. */
async function badH2(misbehave: Misbehaviour): Promise<{ url: string; streams: () => number; close(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  let streams = 0;
  server.on("session", (s) => {
    sessions.add(s);
    s.on("error", () => {});
  });
  server.on("stream", (stream) => {
    streams++;
    stream.on("error", () => {});
    misbehave(stream, stream.session as http2.ServerHttp2Session);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams: () => streams,
    close: () =>
      new Promise((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}

/**
 * A raw h2c server that answers the first request's HEADERS with GOAWAY(last stream id 0,
 * NO_ERROR) — "I processed none of your streams" (node's own goaway() cannot send 0) — and hangs
 * up 20 ms later.
 */
async function goawayZero(): Promise<{ url: string; close(): Promise<void> }> {
  const frame = (type: number, flags: number, payload: Buffer) => {
    const h = Buffer.alloc(9);
    h.writeUIntBE(payload.length, 0, 3);
    h[3] = type;
    h[4] = flags;
    return Buffer.concat([h, payload]);
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.write(frame(4, 0, Buffer.alloc(0))); // our SETTINGS
    let buf = Buffer.alloc(0);
    let preface = false;
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!preface) {
        if (buf.length < 24) return;
        buf = buf.subarray(24);
        preface = true;
      }
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) return;
        const [type, flags] = [buf[3], buf[4]];
        buf = buf.subarray(9 + len);
        if (type === 4 && (flags & 1) === 0) socket.write(frame(4, 1, Buffer.alloc(0))); // SETTINGS ACK
        if (type === 1) {
          socket.write(frame(7, 0, Buffer.alloc(8))); // GOAWAY: last stream id 0, NO_ERROR
          setTimeout(() => socket.destroy(), 20);
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Reads the whole request, then does `then`: the request was delivered. */
const afterRequest =
  (then: Misbehaviour): Misbehaviour =>
  (stream, session) => {
    stream.resume();
    stream.on("end", () => then(stream, session));
  };

describe("failover retries only what provably did not run (issue 22, break 5)", () => {
  let good: TripleServer;
  const bad: Awaited<ReturnType<typeof badH2>>[] = [];
  before(async () => {
    good = createServer({ services: [new RetrySvc()] });
    await good.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    await Promise.all(bad.map((b) => b.close()));
    await good.close();
  });

  /** A client whose first attempt goes to `first`, its retries to the good provider. */
  function clientOf(first: string, extra: Partial<ClientOptions> = {}) {
    return createClient(RetrySvc, { providers: [first, good.url], loadBalance: "roundrobin", timeoutMs: 5000, outlierDetection: false, ...extra });
  }

  async function server(m: Misbehaviour) {
    const b = await badH2(m);
    bad.push(b);
    return b;
  }

  for (const protocol of ["triple", "grpc", "connect", "grpc-web"] as const) {
    it(`${protocol}: REFUSED_STREAM is retried, also for a non-idempotent method`, async () => {
      const b = await server((stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
      const c = clientOf(b.url, { protocol });
      try {
        reached = 0;
        assert.equal(await c.charge(), "charged");
        assert.equal(b.streams(), 1, "the refusing provider saw the first attempt");
        assert.equal(reached, 1);
      } finally {
        await closeClient(c);
      }
    });

    it(`${protocol}: a stream above GOAWAY's last stream id is retried, also for a non-idempotent method`, async () => {
      // The server takes the request, then says it processed no stream (last stream id 0) and hangs up.
      const b = await goawayZero();
      const c = clientOf(b.url, { protocol });
      try {
        reached = 0;
        assert.equal(await c.charge(), "charged");
        assert.equal(reached, 1);
      } finally {
        await closeClient(c);
        await b.close();
      }
    });

    it(`${protocol}: a connection reset after the request was sent is not retried unless the method is idempotent`, async () => {
      const b = await server(afterRequest((_stream, session) => session.destroy()));
      const c = clientOf(b.url, { protocol });
      try {
        reached = 0;
        await assert.rejects(c.charge(), (e: RpcError) => e.code === Code.Unavailable);
        assert.equal(reached, 0, "the non-idempotent call was not sent again");
        assert.equal(await c.read(), "read", "the idempotent call went to the other provider");
        assert.equal(reached, 1);
      } finally {
        await closeClient(c);
      }
    });

    it(`${protocol}: a stream reset after the request (RST_STREAM INTERNAL_ERROR), or a GOAWAY naming our stream then a reset, is not retried unless idempotent`, async () => {
      for (const m of [
        afterRequest((stream) => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR)),
        afterRequest((stream, session) => {
          session.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id ?? 1);
          setTimeout(() => session.destroy(), 20);
        }),
      ]) {
        const b = await server(m);
        const c = clientOf(b.url, { protocol });
        try {
          reached = 0;
          await assert.rejects(c.charge(), (e: RpcError) => e.code === Code.Unavailable);
          assert.equal(reached, 0);
          assert.equal(await c.read(), "read");
        } finally {
          await closeClient(c);
        }
      }
    });
  }

  it("failback follows the same rule in the background", async () => {
    const b = await server(afterRequest((_stream, session) => session.destroy()));
    const c = clientOf(b.url, { cluster: "failback", failbackIntervalMs: 20 });
    try {
      reached = 0;
      assert.equal(await c.charge(), undefined);
      assert.equal(await c.read(), undefined);
      // Whether a failed attempt is sent again is decided when it fails (the charge's before it
      // resolved); the read's retry reaching the handler is the event, three intervals more show
      // nothing else is sent.
      await waitFor(() => reached >= 1, 5000, "the read's background retry");
      await new Promise((r) => setTimeout(r, 60));
      assert.equal(reached, 1, "the idempotent read is sent again once it succeeds; the charge that may have run is not");
    } finally {
      await closeClient(c);
    }
  });

  it("HTTP/1.1: a connection reset after the request was sent is not retried unless the method is idempotent", async () => {
    const h1 = http.createServer((req) => {
      req.resume();
      req.on("end", () => req.socket.destroy());
    });
    await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
    const c = clientOf(`127.0.0.1:${(h1.address() as AddressInfo).port}`, { httpVersion: "1.1" });
    try {
      reached = 0;
      await assert.rejects(c.charge(), (e: RpcError) => e.code === Code.Unavailable);
      assert.equal(reached, 0);
      assert.equal(await c.read(), "read");
      assert.equal(reached, 1);
    } finally {
      await closeClient(c);
      h1.closeAllConnections();
      await new Promise((r) => h1.close(r));
    }
  });

  it("HTTP/1.1: a reused keep-alive socket that closed before the request was written counts as unprocessed", async () => {
    let seen = 0;
    const h1 = http.createServer((req, res) => {
      seen++;
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
    const t = new Http1Transport({ connectTimeoutMs: 1000, tls: undefined });
    const p = new Provider(`127.0.0.1:${(h1.address() as AddressInfo).port}`);
    const req = { path: "/x", headers: {}, body: Buffer.from("[]"), signal: NEVER_ABORTS, maxBytes: 1024 };
    try {
      assert.equal((await t.post(p, req)).status, 200);
      // The idle socket is closing (as when the server's keep-alive timeout fires) but still in the pool.
      const free = (t as unknown as { agent: http.Agent }).agent.freeSockets;
      const sockets = Object.values(free)[0] ?? [];
      assert.equal(sockets.length, 1);
      sockets[0]!.end();
      const err = await t.post(p, req).then(
        () => assert.fail("the request on the closed socket succeeded"),
        (e: unknown) => e,
      );
      assert.equal((err as RpcError).code, Code.Unavailable);
      assert.equal(requestMayHaveRun(err), false, "no byte of the request was written: safe to send elsewhere");
      assert.equal(seen, 1);
    } finally {
      t.close();
      h1.closeAllConnections();
      await new Promise((r) => h1.close(r));
    }
  });

  it("a refused connection is retried, also for a non-idempotent method", async () => {
    const c = clientOf("127.0.0.1:1");
    try {
      reached = 0;
      assert.equal(await c.charge(), "charged");
      assert.equal(reached, 1);
    } finally {
      await closeClient(c);
    }
  });
});
