import * as assert from "node:assert/strict";
import * as http from "node:http";
import { describe, it } from "node:test";
import { CallContext, Code, closeClient, createClient, createServer, Ctx, Method, Param, type RpcError, ServerStream, Service } from "../../src/index.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";
import { waitFor } from "../helpers/wait.js";

const stats = { started: 0, finished: 0, aborted: 0 };

@Service("test.SlowService")
class SlowService {
  @Method()
  async slow(@Param() ms: number, @Ctx() ctx: CallContext): Promise<string> {
    stats.started++;
    await new Promise<void>((resolve) => {
      const onAbort = () => {
        clearTimeout(t);
        stats.aborted++;
        resolve();
      };
      const t = setTimeout(() => {
        ctx.signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      ctx.signal.addEventListener("abort", onAbort);
    });
    stats.finished++;
    return `slept ${ms}`;
  }
}

@Service("test.TickService")
class TickService {
  @ServerStream()
  async *ticks(@Param() n: number, @Param() everyMs: number, @Ctx() ctx: CallContext): AsyncGenerator<number> {
    for (let i = 1; i <= n && !ctx.aborted; i++) {
      await new Promise((r) => setTimeout(r, everyMs));
      yield i;
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, rej) => setTimeout(() => rej(new Error(`${what} hung`)), ms))]);
}

describe("graceful shutdown under load", () => {
  it("every accepted call gets a complete response; nothing hangs; close() resolves", async () => {
    Object.assign(stats, { started: 0, finished: 0, aborted: 0 });
    const server = createServer({ services: [new SlowService()], shutdownTimeoutMs: 5000 });
    await server.listen({ port: 0 });
    const url = server.url;
    let ok = 0;
    let refused = 0;
    let stop = false;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const h1Client = async () => {
      while (!stop) {
        try {
          const r = await post1(url, "/test.SlowService/slow", { headers: JSON_HEADERS, body: "[40]", agent });
          if (r.status === 200) {
            assert.equal(r.json(), "slept 40");
            ok++;
          } else {
            assert.equal(r.status, 503, `unexpected ${r.status} ${r.text()}`);
            refused++;
          }
        } catch {
          refused++; // connection closed or refused before the call was accepted
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    };
    const h2s = [new H2(url), new H2(url)];
    const h2Client = async (h2: H2) => {
      while (!stop) {
        try {
          const r = await h2.request("/test.SlowService/slow", { headers: JSON_HEADERS, body: "[40]" });
          if (r.status === 200) ok++;
          else refused++;
        } catch {
          refused++;
          return; // session gone after GOAWAY
        }
        if (h2.session.closed || h2.session.destroyed) return;
      }
    };
    const loops = [h1Client(), h1Client(), h1Client(), ...h2s.map(h2Client), ...h2s.map(h2Client)];
    // Close while calls are in flight, once more than 10 were answered: wait (bounded) for that
    // moment, rather than trusting a fixed sleep on a loaded machine.
    for (const t0 = Date.now(); (server.inflightCount === 0 || ok <= 10) && Date.now() - t0 < 5000; ) {
      await new Promise((r) => setImmediate(r));
    }
    const inflightAtClose = server.inflightCount;
    await withTimeout(server.close(), 8000, "close()");
    stop = true;
    await withTimeout(Promise.all(loops), 5000, "client loops");
    agent.destroy();
    for (const h of h2s) h.close();
    assert.ok(ok > 10, `calls completed before shutdown: ${ok} (refused while closing: ${refused})`);
    assert.ok(inflightAtClose > 0, "the server was busy when close() began");
    assert.equal(stats.aborted, 0, "no accepted call was cancelled within the drain deadline");
    assert.equal(stats.finished, stats.started, "every started handler finished");
    assert.equal(ok, stats.finished, "every finished handler's response reached its client");
    assert.equal(server.inflightCount, 0);
  });

  it("calls still running at the drain deadline are cancelled with unavailable (503)", async () => {
    Object.assign(stats, { started: 0, finished: 0, aborted: 0 });
    const server = createServer({ services: [new SlowService()], shutdownTimeoutMs: 200 });
    await server.listen({ port: 0 });
    const pending = post1(server.url, "/test.SlowService/slow", { headers: JSON_HEADERS, body: "[10000]" });
    await waitFor(() => stats.started === 1, 5000, "the long call to start");
    const t0 = Date.now();
    await server.close();
    const r = await withTimeout(pending, 3000, "the long call");
    // One-sided and generous: the handler's own end is 10 s away, so close() returning well
    // before it honoured the 200 ms drain deadline (a loaded machine only delays it).
    assert.ok(Date.now() - t0 < 8000, `close() honoured the drain deadline: ${Date.now() - t0} ms`);
    assert.equal(r.status, 503);
    assert.equal(r.json().code, "unavailable");
    assert.equal(r.json().status, 35);
    assert.equal(stats.aborted, 1, "the handler's signal fired");
  });

  it("gRPC streams open at close() finish within the deadline; the rest end with unavailable (14)", async () => {
    const server = createServer({ services: [new TickService()], shutdownTimeoutMs: 600 });
    await server.listen({ port: 0 });
    const client = createClient(TickService, { providers: [server.url], protocol: "grpc" });
    try {
      const collect = async (n: number) => {
        const got: number[] = [];
        try {
          for await (const t of client.ticks(n, 50)) got.push(t as number);
          return { got, err: undefined as RpcError | undefined };
        } catch (e) {
          return { got, err: e as RpcError };
        }
      };
      const short = collect(5);
      const long = collect(1000);
      await new Promise((r) => setTimeout(r, 120));
      const t0 = Date.now();
      // One-sided and generous: the long stream's own end is 50 s away (1000 ticks, 50 ms
      // apart), so close() returning within 10 s honoured the 600 ms drain deadline.
      await withTimeout(server.close(), 10_000, "close()");
      assert.ok(Date.now() - t0 < 10_000, `close() honoured the drain deadline: ${Date.now() - t0} ms`);
      const a = await withTimeout(short, 3000, "the short stream");
      const b = await withTimeout(long, 3000, "the long stream");
      assert.equal(a.err, undefined);
      assert.deepEqual(a.got, [1, 2, 3, 4, 5]);
      assert.ok(b.got.length >= 5, `the long stream kept streaming during the drain (${b.got.length})`);
      assert.equal(b.err?.code, Code.Unavailable, `long stream ended with ${b.err}`);
    } finally {
      closeClient(client);
    }
  });
});
