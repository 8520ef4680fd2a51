import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createServer } from "../../src/index.js";
import { StreamTable, installStreamTable } from "../../src/transport/stream-table.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { waitFor } from "../helpers/wait.js";

const stateOf = (session: http2.Http2Session): { streams: unknown } => {
  const key = Object.getOwnPropertySymbols(session).find((k) => k.description === "state")!;
  return (session as unknown as Record<symbol, { streams: unknown }>)[key];
};

describe("StreamTable", () => {
  it("behaves like the Map it replaces", () => {
    const t = new StreamTable<string>();
    assert.equal(t.size, 0);
    assert.equal(t.set(1, "a"), t);
    t.set(3, "b").set(5, "c").set(3, "B");
    assert.equal(t.size, 3);
    assert.equal(t.get(3), "B");
    assert.equal(t.get(7), undefined);
    assert.equal(t.has(5), true);
    assert.equal(t.delete(5), true);
    assert.equal(t.delete(5), false);
    assert.equal(t.has(5), false);
    assert.deepEqual(
      [...t],
      [
        [1, "a"],
        [3, "B"],
      ],
    );
    assert.deepEqual([...t.keys()], [1, 3]);
    assert.deepEqual([...t.values()], ["a", "B"]);
    assert.deepEqual(
      [...t.entries()],
      [
        [1, "a"],
        [3, "B"],
      ],
    );
    t.clear();
    assert.equal(t.size, 0);
    assert.deepEqual([...t], []);
  });

  it("lets forEach callbacks delete entries (as stream.destroy does) and visits each once", () => {
    const t = new StreamTable<number>();
    for (let id = 1; id < 200; id += 2) t.set(id, id);
    const seen: number[] = [];
    t.forEach((v, id, table) => {
      assert.equal(table, t);
      seen.push(v);
      t.delete(id);
    });
    assert.equal(seen.length, 100);
    assert.equal(t.size, 0);
  });

  it("keeps insertion order for ascending stream ids up to 2^31 - 1", () => {
    const t = new StreamTable<number>();
    const ids = [1, 3, 1001, 2 ** 20 + 1, 2 ** 31 - 1];
    for (const id of ids) t.set(id, id);
    assert.deepEqual([...t.keys()], ids);
  });
});

describe("HTTP/2 sessions use a StreamTable", () => {
  it("on the server: many concurrent calls, then a session destroyed with streams open", async () => {
    const server = createServer({ services: [new GreetServiceImpl("triple")] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    const client = http2.connect(server.url);
    try {
      const calls = Array.from(
        { length: 300 },
        () =>
          new Promise<number>((resolve, reject) => {
            const s = client.request({ ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/json" });
            s.on("response", (h) => resolve(Number(h[":status"])));
            s.on("error", reject);
            s.resume();
            s.end(JSON.stringify({ name: "triple" }));
          }),
      );
      assert.deepEqual(new Set(await Promise.all(calls)), new Set([200]));
      // White-box: the server's own session (test-only reach into private fields).
      const sessions = (server as unknown as { listener: { sessions: Set<http2.ServerHttp2Session> } }).listener.sessions;
      assert.equal(sessions.size, 1);
      const table = stateOf([...sessions][0]!).streams;
      assert.ok(table instanceof StreamTable);
      assert.equal(table.size, 0);
      // Streams left open (no END_STREAM) are in the table when the client goes away: the
      // session's destroy walks the table (forEach) and every handler's stream is torn down.
      const open = Array.from({ length: 20 }, () => {
        const s = client.request({ ":method": "POST", ":path": "/greet.GreetService/GreetClientStream", "content-type": "application/grpc" });
        s.on("error", () => {});
        s.write(Buffer.from([0, 0, 0, 0, 0]));
        return s;
      });
      await waitFor(() => table.size === 20, 5000, "the 20 open streams in the table");
      client.destroy();
      for (const s of open) s.destroy();
      // The server keeps serving new sessions afterwards.
      const again = http2.connect(server.url);
      const status = await new Promise<number>((resolve, reject) => {
        const s = again.request({ ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/json" });
        s.on("response", (h) => resolve(Number(h[":status"])));
        s.on("error", reject);
        s.resume();
        s.end(JSON.stringify({ name: "triple" }));
      });
      again.close();
      assert.equal(status, 200);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it("installs on a real node:http2 session and keeps its bookkeeping right", async () => {
    const srv = http2.createServer();
    let serverSession: http2.ServerHttp2Session | undefined;
    srv.on("session", (s) => {
      installStreamTable(s);
      serverSession = s;
    });
    srv.on("stream", (stream) => {
      stream.respond({ ":status": 200 });
      stream.end("ok");
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const client = http2.connect(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
    installStreamTable(client);
    try {
      const bodies = await Promise.all(
        Array.from(
          { length: 50 },
          () =>
            new Promise<string>((resolve, reject) => {
              const r = client.request({});
              let body = "";
              r.setEncoding("utf8");
              r.on("data", (c) => (body += c));
              r.on("end", () => resolve(body));
              r.on("error", reject);
            }),
        ),
      );
      assert.deepEqual(new Set(bodies), new Set(["ok"]));
      assert.ok(stateOf(serverSession!).streams instanceof StreamTable);
      assert.ok(stateOf(client).streams instanceof StreamTable);
      await new Promise((r) => setImmediate(r));
      assert.equal((stateOf(client).streams as StreamTable<unknown>).size, 0);
    } finally {
      client.close();
      await new Promise((r) => srv.close(r));
    }
  });

  it("leaves sessions alone (and never fails) when node's private shape is not the expected one", () => {
    const module = JSON.stringify(join(__dirname, "..", "..", "src", "transport", "stream-table.js"));
    const out = execFileSync(
      process.execPath,
      [
        "-e",
        `const { installStreamTable } = require(${module});
         const state = Symbol("state");
         const odd = { [state]: { streams: new Set() } };
         installStreamTable(odd);
         const later = { [state]: { streams: new Map() } };
         installStreamTable(later);
         installStreamTable({});
         console.log(JSON.stringify([odd[state].streams instanceof Set, later[state].streams instanceof Map]));`,
      ],
      { encoding: "utf8" },
    );
    assert.deepEqual(JSON.parse(out), [true, true]);
  });
});
