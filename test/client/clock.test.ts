// The `clock` option: a clock moved by hand drives a real client's warm-up, back-off and outlier
// ejection, and a server's log window, against real servers, without one sleep.
import * as assert from "node:assert/strict";
import * as net from "node:net";
import { after, before, describe, it } from "node:test";
import {
  type Clock,
  clientProviders,
  closeClient,
  Code,
  createClient,
  createServer,
  Method,
  type ProvidersListener,
  type Registry,
  RpcError,
  Service,
  type TripleServer,
} from "../../src/index.js";
import { parseUrl } from "../../src/registry.js";
import { waitFor } from "../helpers/wait.js";
// A free port is one nothing listens on: connecting to it is refused.
import { freePort } from "../helpers/zookeeper.js";

/** A logger that keeps nothing (the clients below log their ejections and refusals). */
const quiet = { info() {}, warn() {}, error() {} };

/** A clock the test moves by hand. */
function manualClock(t = 1_750_000_000_000): Clock & { t: number } {
  const c = { t, now: () => c.t };
  return c;
}

/** Each server says who it is; a hanging one answers nothing until released. */
@Service("clock.Who")
class Who {
  hang: Promise<void> | undefined;
  constructor(readonly id: string) {}

  @Method({ idempotent: true })
  async who(): Promise<string> {
    if (this.hang) await this.hang;
    return this.id;
  }

  @Method()
  async boom(): Promise<string> {
    throw new Error(`boom on ${this.id}`);
  }
}

/** A registry in this process: lists the given provider URLs (no ZooKeeper). */
function listing(urls: readonly string[]): Registry {
  return {
    address: "test://clock",
    register: async () => {},
    unregister: async () => {},
    subscribe: (_key, listener: ProvidersListener) => {
      listener(urls.map(parseUrl));
      return () => {};
    },
    close: async () => {},
  };
}

describe("clock option: warm-up, back-off and ejection on a clock moved by hand", () => {
  const impls = [new Who("a"), new Who("b")];
  const servers: TripleServer[] = [];
  const clients: object[] = [];
  before(async () => {
    for (const impl of impls) {
      const s = createServer({ services: [impl] });
      await s.listen({ port: 0 });
      servers.push(s);
    }
  });
  after(async () => {
    await Promise.all(clients.map((c) => closeClient(c)));
    await Promise.all(servers.map((s) => s.close()));
  });

  const counts = async (c: { who(): Promise<string> }, n: number) => {
    const seen: Record<string, number> = { a: 0, b: 0 };
    for (let i = 0; i < n; i++) seen[await c.who()]++;
    return seen;
  };

  it("warm-up: a provider announcing warmup ramps its weight as the client's clock moves", async () => {
    const clock = manualClock();
    const warmMs = 600_000; // Dubbo's default: ten minutes, passed in three steps
    const [a, b] = servers.map((s) => new URL(s.url).port);
    const q = `interface=clock.Who&methods=who,boom&side=provider&weight=100`;
    const registry = listing([`tri://127.0.0.1:${a}/clock.Who?${q}`, `tri://127.0.0.1:${b}/clock.Who?${q}&timestamp=${clock.t}&warmup=${warmMs}`]);
    const c = createClient(Who, { registry: { address: registry, level: "interface", configCenter: false }, clock, loadBalance: "roundrobin" });
    clients.push(c);
    assert.equal(await c.who(), "a"); // the first list is known
    const warming = () => clientProviders(c).find((p) => p.warmUp !== undefined)!;
    assert.equal(warming().weight, 1, "just started: weight 1");
    assert.deepEqual(await counts(c, 101), { a: 100, b: 1 });
    clock.t += warmMs / 2;
    assert.equal(warming().weight, 50, "half-way: half the weight");
    clock.t += warmMs / 2;
    assert.equal(warming().weight, 100, "warm: the full weight");
    assert.deepEqual(await counts(c, 100), { a: 50, b: 50 });
  });

  it("back-off: a refused provider is skipped until the clock passes its back-off, then tried again", async () => {
    const clock = manualClock();
    const port = await freePort();
    const c = createClient(Who, { providers: [`127.0.0.1:${port}`, servers[0].url], loadBalance: "roundrobin", downBackoffMs: 20_000, clock, logger: quiet });
    clients.push(c);
    assert.equal(await c.who(), "a");
    const [down] = clientProviders(c);
    assert.ok(down.isDown(), "refused: down");
    assert.equal(down.downUntil, clock.t + 20_000, "for the back-off, on the client's clock");
    const revived = createServer({ services: [new Who("revived")] });
    await revived.listen({ port });
    servers.push(revived);
    for (let i = 0; i < 5; i++) assert.equal(await c.who(), "a", "skipped while its back-off lasts");
    clock.t += 20_000;
    assert.ok(!down.isDown(), "the back-off ran out");
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add(await c.who());
    assert.ok(seen.has("revived"), "tried again and answered");
    assert.equal(down.failures, 0);
  });

  it("ejection: a provider whose calls time out is ejected, and let back on probation when the clock passes the ejection", async () => {
    const clock = manualClock();
    const [slow] = impls;
    let release = () => {};
    slow.hang = new Promise<void>((r) => {
      release = r;
    });
    const c = createClient(Who, {
      providers: servers.slice(0, 2).map((s) => s.url),
      loadBalance: "roundrobin",
      retries: 0,
      outlierDetection: { consecutiveFailures: 2, baseEjectionMs: 30_000 },
      clock,
      logger: quiet,
    });
    clients.push(c);
    const a = clientProviders(c).find((p) => p.port === Number(new URL(servers[0].url).port))!;
    let timedOut = 0;
    for (let i = 0; i < 6 && !a.isEjected(); i++) {
      await c.who({ timeoutMs: 100 }).catch((e: unknown) => {
        assert.ok(e instanceof RpcError && e.code === Code.DeadlineExceeded, String(e));
        timedOut++;
      });
    }
    assert.equal(timedOut, 2, "two timeouts in a row");
    assert.ok(a.isEjected());
    assert.equal(a.ejectedUntil, clock.t + 30_000, "for baseEjectionMs on the client's clock");
    assert.deepEqual(await counts(c, 10), { a: 0, b: 10 });
    slow.hang = undefined;
    release();
    clock.t += 29_999;
    assert.deepEqual(await counts(c, 10), { a: 0, b: 10 }, "still out 1 ms before the end");
    clock.t += 1;
    assert.ok(!a.isEjected(), "the ejection ran out: on probation");
    const seen = await counts(c, 10);
    assert.ok(seen.a > 0, "a probe reached it");
    assert.equal(a.ejectedUntil, 0, "answered: readmitted");
    assert.equal(a.lastReadmitted, clock.t, "readmitted at the client's clock");
  });

  it("a clock without now() is refused by createClient and createServer, naming the option", () => {
    for (const bad of [{}, 5, "now", { now: 1 }, null]) {
      assert.throws(
        () => createClient(Who, { providers: "127.0.0.1:1", clock: bad as never }),
        (e: unknown) => e instanceof TypeError && /^createClient: clock must be an object with a now\(\) method/.test(e.message),
      );
      assert.throws(
        () => createServer({ clock: bad as never }),
        (e: unknown) => e instanceof TypeError && /^createServer: clock must be an object with a now\(\) method/.test(e.message),
      );
    }
    const registry = listing([]);
    assert.throws(() => createClient(Who, { registry, clock: {} as never }), /createClient: clock must be/);
  });
});

describe("clock option: the server's log window", () => {
  it("the default logger's one-line-per-minute window reads the server's clock", async () => {
    const clock = manualClock();
    const lines: string[] = [];
    const original = console.error;
    console.error = (line: string) => lines.push(line);
    const server = createServer({ services: [new Who("s")], clock });
    try {
      await server.listen({ port: 0 });
      const c = createClient(Who, { providers: [server.url], retries: 0 });
      try {
        const fail = () => c.boom().catch(() => undefined);
        await fail();
        await fail();
        await fail();
        assert.equal(lines.length, 1, "one line for three failures within the minute");
        clock.t += 60_000;
        await fail();
        assert.equal(lines.length, 2, "the next minute: a line again");
        assert.match(lines[1], /suppressed=2/);
      } finally {
        await closeClient(c);
      }
    } finally {
      console.error = original;
      await server.close();
    }
  });
});

describe("clock option: the server's report of refused connections", () => {
  it("refusals past a connection cap are reported once per minute of the server's clock", async () => {
    const clock = manualClock();
    const warned: string[] = [];
    const logger = { info() {}, warn: (_o: object, m: string) => warned.push(m), error() {} };
    const impl = new Who("capped");
    let release = () => {};
    impl.hang = new Promise<void>((r) => {
      release = r;
    });
    const server = createServer({ services: [impl], maxConnectionsPerPeer: 1, logger, clock });
    const { port } = await server.listen({ port: 0, host: "127.0.0.1" });
    const sockets: net.Socket[] = [];
    const connect = () =>
      new Promise<net.Socket>((resolve) => {
        const s = net.connect(port, "127.0.0.1", () => resolve(s));
        s.on("error", () => {});
        sockets.push(s);
      });
    const refusedOne = async () => {
      const n = server.connections.refused;
      const s = await connect();
      await new Promise((r) => (s.destroyed ? r(undefined) : s.once("close", r)));
      assert.equal(server.connections.refused, n + 1, "closed at accept");
    };
    try {
      // One connection carrying a call (an idle one would be closed to make room instead).
      const busy = await connect();
      busy.write("POST /clock.Who/who HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]");
      await waitFor(() => server.inflightCount === 1, 5000, "the call in flight");
      await refusedOne();
      await refusedOne();
      await refusedOne();
      const reports = () => warned.filter((m) => m.startsWith("refusing new connections"));
      assert.deepEqual(reports(), ["refusing new connections: maxConnectionsPerPeer (1) reached; 1 refused since the last report"]);
      clock.t += 59_999;
      await refusedOne();
      assert.equal(reports().length, 1, "within the minute: counted, not reported");
      clock.t += 1;
      await refusedOne();
      assert.equal(reports()[1], "refusing new connections: maxConnectionsPerPeer (1) reached; 4 refused since the last report");
    } finally {
      release();
      for (const s of sockets) s.destroy();
      await server.close();
    }
  });
});
