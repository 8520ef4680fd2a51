import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  closeClient,
  Code,
  ConsoleLogger,
  createClient,
  createServer,
  type Logger,
  type ProvidersListener,
  type Registry,
  RpcError,
  type TripleServer,
} from "../../src/index.js";
import { ProbeService } from "./otel-service.js";
import { parseUrl } from "../../src/registry.js";

interface Line {
  level: "info" | "warn" | "error";
  obj: Record<string, unknown>;
  msg: string;
}

function capturing(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: Line["level"]) => (obj: object, msg: string) => lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

async function failure(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof RpcError);
    return e;
  }
  return assert.fail("the call should fail");
}

describe("handler errors in the log", () => {
  const logger = capturing();
  let server: TripleServer;
  let masked: TripleServer;
  const maskedLogger = capturing();
  before(async () => {
    server = createServer({ services: [new ProbeService()], logger });
    masked = createServer({ services: [new ProbeService()], logger: maskedLogger, maskUnexpectedErrors: true });
    await server.listen({ port: 0 });
    await masked.listen({ port: 0 });
  });
  after(async () => {
    await server.close();
    await masked.close();
  });

  for (const protocol of ["grpc", "triple"] as const) {
    it(`${protocol}: a plain Error is logged with its stack, service, method and peer; the caller gets its text (the default)`, async () => {
      logger.lines.length = 0;
      const c = createClient(ProbeService, { providers: [server.url], protocol, retries: 0 });
      try {
        const err = await failure(c.boom("disk"));
        assert.equal(err.code, Code.Unknown);
        assert.equal(err.rawMessage, "kaboom: disk");
      } finally {
        closeClient(c);
      }
      assert.equal(logger.lines.length, 1);
      const [line] = logger.lines;
      assert.equal(line.level, "error");
      assert.match(line.msg, /otel\.Probe\/boom failed: TypeError: kaboom: disk/);
      assert.ok(line.obj.err instanceof TypeError);
      assert.match(String(line.obj.stack), /TypeError: kaboom: disk\n\s+at ProbeService\.boom/);
      assert.equal(line.obj.service, "otel.Probe");
      assert.equal(line.obj.method, "boom");
      assert.match(String(line.obj.peer), /^127\.0\.0\.1:\d+$/);
      assert.equal(line.obj.protocol, protocol);
    });
  }

  it("an RpcError is the handler's answer, not a bug: nothing is logged", async () => {
    logger.lines.length = 0;
    const c = createClient(ProbeService, { providers: [server.url], retries: 0 });
    try {
      assert.equal((await failure(c.fail(Code.NotFound))).code, Code.NotFound);
    } finally {
      closeClient(c);
    }
    assert.equal(logger.lines.length, 0);
  });

  it("a stream's iterator that throws is logged the same way", async () => {
    logger.lines.length = 0;
    const c = createClient(ProbeService, { providers: [server.url], protocol: "grpc", retries: 0 });
    const got: number[] = [];
    try {
      const err = await failure(
        (async () => {
          for await (const i of c.breaks()) got.push(i);
        })(),
      );
      assert.equal(err.rawMessage, "the stream broke");
    } finally {
      closeClient(c);
    }
    assert.deepEqual(got, [1]);
    assert.equal(logger.lines.length, 1);
    assert.match(String(logger.lines[0].obj.stack), /RangeError: the stream broke/);
    assert.equal(logger.lines[0].obj.method, "breaks");
  });

  for (const protocol of ["grpc", "triple"] as const) {
    it(`${protocol}: maskUnexpectedErrors: the caller gets "internal error (id …)", the log the same id and the real error`, async () => {
      maskedLogger.lines.length = 0;
      const c = createClient(ProbeService, { providers: [masked.url], protocol, retries: 0 });
      let err: RpcError;
      try {
        err = await failure(c.boom("secret path /etc/x"));
      } finally {
        closeClient(c);
      }
      assert.equal(err.code, Code.Unknown);
      const m = /^internal error \(id ([0-9a-f]{8})\)$/.exec(err.rawMessage);
      assert.ok(m, `masked text: ${err.rawMessage}`);
      assert.equal(maskedLogger.lines.length, 1);
      assert.equal(maskedLogger.lines[0].obj.errorId, m[1]);
      assert.match(maskedLogger.lines[0].msg, /secret path/);
    });
  }

  it("maskUnexpectedErrors leaves RpcErrors' text alone", async () => {
    const c = createClient(ProbeService, { providers: [masked.url], retries: 0 });
    try {
      const err = await failure(c.fail(Code.NotFound));
      assert.equal(err.rawMessage, `failing with ${Code.NotFound}`);
    } finally {
      closeClient(c);
    }
  });
});

describe("the default console logger", () => {
  it("prints one line per cause, then how many repeats it left out once the window passed", async () => {
    const printed: unknown[][] = [];
    const sink = { warn: (...a: unknown[]) => printed.push(["warn", ...a]), error: (...a: unknown[]) => printed.push(["error", ...a]) };
    const clock = { t: 0, now: () => clock.t };
    const log = new ConsoleLogger(sink, 30, clock);
    for (let i = 0; i < 5; i++) log.error({ err: new TypeError("x") }, "svc/m failed: TypeError: x");
    log.error({ err: new TypeError("y") }, "svc/m failed: TypeError: y");
    log.warn({}, "svc/m failed: TypeError: x");
    log.info({}, "never printed");
    assert.equal(printed.length, 3);
    clock.t += 29;
    log.error({ err: new TypeError("x") }, "svc/m failed: TypeError: x");
    assert.equal(printed.length, 3, "still within the window");
    clock.t += 1;
    log.error({ err: new TypeError("x") }, "svc/m failed: TypeError: x");
    assert.equal(printed.length, 4);
    assert.equal(printed[3][0], "error");
    assert.equal(printed[3][1], "[triple-rpc] svc/m failed: TypeError: x (suppressed=5)");
  });

  it("prints one compact line per event, with the stack only the first time a cause is printed", async () => {
    const printed: unknown[][] = [];
    const sink = { warn: (...a: unknown[]) => printed.push(a), error: (...a: unknown[]) => printed.push(a) };
    const clock = { t: 0, now: () => clock.t };
    const log = new ConsoleLogger(sink, 10, clock);
    const err = () => new TypeError("x");
    const fields = { service: "svc", method: "m", peer: "127.0.0.1:5000", note: "two words" };
    log.error({ err: err(), stack: err().stack, ...fields }, "svc/m failed: TypeError: x");
    clock.t += 10;
    log.error({ err: err(), stack: err().stack, ...fields }, "svc/m failed: TypeError: x");
    log.warn({ provider: "127.0.0.1:1", skipMs: 1000, err: new Error("connect ECONNREFUSED") }, "provider 127.0.0.1:1 is unreachable");
    assert.equal(printed.length, 3);
    for (const p of printed) assert.equal(p.length, 1, "one string, no object dump");
    const [first, second, warn] = printed.map((p) => String(p[0]).split("\n"));
    assert.equal(first![0], '[triple-rpc] svc/m failed: TypeError: x (service=svc method=m peer=127.0.0.1:5000 note="two words")');
    assert.ok(first!.length > 1 && first!.slice(1).every((l) => /^\s+at /.test(l)), first!.join("\n"));
    assert.deepEqual(second, ['[triple-rpc] svc/m failed: TypeError: x (service=svc method=m peer=127.0.0.1:5000 note="two words")']);
    assert.equal(warn![0], "[triple-rpc] provider 127.0.0.1:1 is unreachable (provider=127.0.0.1:1 skipMs=1000)");
  });

  it("is what a server without a logger uses: a handler failing in a loop prints one line", async () => {
    const server = createServer({ services: [new ProbeService()] });
    await server.listen({ port: 0 });
    const c = createClient(ProbeService, { providers: [server.url], retries: 0 });
    const original = console.error;
    const printed: unknown[][] = [];
    console.error = (...a: unknown[]) => printed.push(a);
    try {
      for (let i = 0; i < 20; i++) await failure(c.boom("loop"));
    } finally {
      console.error = original;
      closeClient(c);
      await server.close();
    }
    assert.equal(printed.length, 1);
    assert.equal(printed[0].length, 1, "one string, no object dump");
    const [line, ...stack] = String(printed[0][0]).split("\n");
    assert.match(
      line!,
      /^\[triple-rpc\] otel\.Probe\/boom failed: TypeError: kaboom: loop \(service=otel\.Probe method=boom peer=\S+ protocol=triple errorId=[0-9a-f]{8}\)$/,
    );
    assert.match(stack.join("\n"), /^\s+at ProbeService\.boom/);
  });

  it("a logger without the three methods is refused", () => {
    assert.throws(() => createServer({ logger: { info() {} } as unknown as Logger }), /logger must have info, warn and error/);
    assert.throws(() => createClient(ProbeService, { providers: ["127.0.0.1:1"], logger: {} as Logger }), /logger must have/);
  });
});

describe("client logging", () => {
  it("a provider that refuses connections is a warning", async () => {
    const logger = capturing();
    const dead = createServer({});
    const port = (await dead.listen({ port: 0 })).port;
    await dead.close();
    const c = createClient(ProbeService, { providers: [`127.0.0.1:${port}`], retries: 0, logger });
    try {
      await failure(c.hello("x"));
    } finally {
      closeClient(c);
    }
    assert.equal(logger.lines.length, 1);
    assert.equal(logger.lines[0].level, "warn");
    assert.equal(logger.lines[0].obj.provider, `127.0.0.1:${port}`);
    assert.match(logger.lines[0].msg, /is unreachable/);
  });

  it("a provider that announced its shutdown (GOAWAY) and then refuses connections is not warned about", async () => {
    const logger = capturing();
    const server = createServer({ services: [new ProbeService()] });
    await server.listen({ port: 0 });
    const c = createClient(ProbeService, { providers: [server.url], protocol: "grpc", retries: 0, logger });
    try {
      assert.equal(await c.hello("x"), "hello x");
      await server.close(); // GOAWAY on the client's session, then the listener is gone
      const err = await failure(c.hello("y"));
      assert.equal(err.code, Code.Unavailable);
    } finally {
      closeClient(c);
    }
    assert.deepEqual(logger.lines, []);
  });

  it("a provider the registry stopped listing (it unregistered to shut down) is not warned about when it refuses", async () => {
    const logger = capturing();
    const server = createServer({ services: [new ProbeService()] });
    const port = (await server.listen({ port: 0 })).port;
    let notify: ProvidersListener = () => {};
    const registry: Registry = {
      address: "test://registry",
      register: async () => {},
      unregister: async () => {},
      subscribe: (_key, listener) => {
        notify = listener;
        listener([parseUrl(`tri://127.0.0.1:${port}/otel.Probe?interface=otel.Probe&side=provider`)]);
        return () => {};
      },
      close: async () => {},
    };
    // HTTP/1.1: no GOAWAY tells the client; the registry's notification is the announcement.
    const c = createClient(ProbeService, { registry, httpVersion: "1.1", retries: 0, logger });
    try {
      assert.equal(await c.hello("x"), "hello x");
      notify([]); // unregistered; empty protection keeps calling it
      await server.close();
      const err = await failure(c.hello("y"));
      assert.equal(err.code, Code.Unavailable);
    } finally {
      closeClient(c);
    }
    assert.deepEqual(
      logger.lines.filter((l) => /unreachable/.test(l.msg)),
      [],
    );
  });
});
