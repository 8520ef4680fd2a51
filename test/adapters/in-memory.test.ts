import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import {
  type Client,
  type ClientContentType,
  Code,
  closeClient,
  createClient,
  createServer,
  createTestClient,
  Download,
  type StreamedFile,
  type Interceptor,
  RpcError,
  type ServerOptions,
  type TripleServer,
} from "../../src/index.js";
import { collect, EchoService, values } from "../client/services.js";
import { DownloadService, type Seen, UploadService } from "../uploads/services.js";
import { SecretService, TOKEN } from "./mounted.js";

/**
 * The in-memory client against the same contract table as a client over sockets: for each
 * protocol and HTTP version, both must give the same answers, errors and streams.
 */

/** A server interceptor: a response header on every call, and one method refused by it. */
const stamp: Interceptor = (next) => async (call) => {
  call.context.responseHeaders.set("x-stamped", "yes");
  if (call.method.name === "concat" && call.input[1] === "!") throw new RpcError(Code.FailedPrecondition, "the interceptor refuses '!'");
  return next(call);
};

function serverOptions(): ServerOptions {
  return {
    services: [new GreetServiceImpl(), new EchoService(), new SecretService()],
    interceptors: [stamp],
    limits: { maxBodyBytes: 64 * 1024, maxMessageBytes: 64 * 1024 },
    auth: { verify: (t) => (t === TOKEN ? { subject: "t" } : null) },
  };
}

interface Combo {
  httpVersion: "1.1" | "2";
  protocol?: "connect" | "grpc-web";
  contentType?: ClientContentType;
}

const COMBOS: Combo[] = [
  { httpVersion: "2", contentType: "json" },
  { httpVersion: "2", contentType: "proto" },
  { httpVersion: "2", contentType: "grpc+proto" },
  { httpVersion: "2", protocol: "connect", contentType: "json" },
  { httpVersion: "2", protocol: "grpc-web", contentType: "proto" },
  { httpVersion: "1.1", contentType: "json" },
  { httpVersion: "1.1", protocol: "connect", contentType: "proto" },
];

type Make = <S>(service: abstract new (...args: any[]) => S, combo: Combo, token?: string) => Client<S>;

/** The contract table, as `it` cases run with clients from `make`. */
function contract(make: () => Make, combo: Combo): void {
  const clients: object[] = [];
  const client = <S>(service: abstract new (...args: any[]) => S, token?: string): Client<S> => {
    const c = make()(service, combo, token);
    clients.push(c as object);
    return c;
  };
  after(async () => {
    for (const c of clients.splice(0)) await closeClient(c);
  });

  it("unary: greet, several parameters, arrays, bytes", async () => {
    assert.deepEqual(await client(GreetServiceImpl).greet({ name: "triple" }), { greeting: "triple" });
    const echo = client(EchoService);
    assert.equal(await echo.add(2, 3), 5);
    assert.equal(await echo.concat(["a", "b"], "-"), "a-b");
    assert.equal(await echo.size(new Uint8Array([1, 2, 3])), 3);
  });

  it("errors keep code and message; the handler's error is unknown", async () => {
    const echo = client(EchoService);
    const err = (await echo.fail(Code.PermissionDenied, "no").catch((e) => e)) as RpcError;
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, Code.PermissionDenied);
    assert.match(err.message, /no$/);
    const bad = (await client(GreetServiceImpl)
      .greet({ name: "x" })
      .catch((e) => e)) as RpcError;
    assert.equal(bad.code, Code.Unknown);
  });

  it("limits: a request over maxMessageBytes is resource_exhausted", async () => {
    const err = (await client(EchoService)
      .size(new Uint8Array(100 * 1024))
      .catch((e) => e)) as RpcError;
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, Code.ResourceExhausted);
  });

  it("interceptors run: they refuse a call in the server's terms", async () => {
    const err = (await client(EchoService)
      .concat(["a"], "!")
      .catch((e) => e)) as RpcError;
    assert.equal(err.code, Code.FailedPrecondition);
    assert.match(err.message, /the interceptor refuses/);
  });

  it("auth: no token is unauthenticated, the token is served", async () => {
    const err = (await client(SecretService)
      .whisper("a")
      .catch((e) => e)) as RpcError;
    assert.equal(err.code, Code.Unauthenticated);
    assert.equal(await client(SecretService, TOKEN).whisper("a"), "psst, a");
  });

  if (combo.httpVersion === "2") {
    it("streams: server, client and bidi", async () => {
      const echo = client(EchoService);
      assert.deepEqual(await collect(echo.count(3)), [1, 2, 3]);
      assert.equal(await echo.sum(values([1, 2, 3, 4])), 10);
      assert.deepEqual(await collect(echo.double(values([1, 5]))), [2, 10]);
    });
  }
}

const label = (c: Combo) => `${c.protocol ?? "triple"} HTTP/${c.httpVersion} ${c.contentType ?? ""}`;

describe("the contract table over sockets", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer(serverOptions());
    await server.listen({ port: 0 });
  });
  after(() => server.close());
  const make: Make = (service, combo, token) => createClient(service, { providers: [server.url], retries: 0, ...combo, token });
  for (const combo of COMBOS) describe(label(combo), () => contract(() => make, combo));
});

describe("the same contract table in memory (createTestClient, no socket)", () => {
  const make: Make = (service, combo, token) => createTestClient(service, { ...serverOptions(), client: { ...combo, token } });
  for (const combo of COMBOS) describe(label(combo), () => contract(() => make, combo));
});

describe("createTestClient", () => {
  it("opens no socket and answers no slower than a call over a loopback socket", async () => {
    const client = createTestClient(GreetServiceImpl, { services: [new GreetServiceImpl()] });
    const server = createServer({ services: [new GreetServiceImpl()] });
    let socketClient: Client<GreetServiceImpl> | undefined;
    try {
      const handles = () =>
        (process as unknown as { _getActiveHandles(): object[] })
          ._getActiveHandles()
          .filter((h) => h.constructor.name === "Socket" || h.constructor.name === "TCP").length;
      const before = handles();
      await client.greet({ name: "triple" });
      const perCall = async (c: Client<GreetServiceImpl>) => {
        const t = performance.now();
        for (let i = 0; i < 200; i++) await c.greet({ name: "triple" });
        return (performance.now() - t) / 200;
      };
      const inMemory = [await perCall(client)];
      assert.equal(handles(), before, "no socket was opened");
      // The baseline: the same calls through a real server on 127.0.0.1, measured alternately in
      // this test (a ratio, not a wall-clock bound: a loaded machine slows both alike).
      await server.listen({ port: 0, host: "127.0.0.1" });
      socketClient = createClient(GreetServiceImpl, { providers: server.url.replace("http://", "") });
      await socketClient.greet({ name: "triple" });
      const socket = [await perCall(socketClient)];
      for (let round = 0; round < 2; round++) {
        inMemory.push(await perCall(client));
        socket.push(await perCall(socketClient));
      }
      const [m, s] = [Math.min(...inMemory), Math.min(...socket)];
      assert.ok(m < 2 * s, `${m.toFixed(3)} ms per call in memory, ${s.toFixed(3)} ms over a socket`);
    } finally {
      await closeClient(client);
      if (socketClient) await closeClient(socketClient);
      await server.close();
    }
  });
});

describe("createTestClient: file arguments and file replies", () => {
  for (const httpVersion of ["1.1", "2"] as const) {
    it(`HTTP/${httpVersion}: a Blob argument streams in as a StreamedFile, a file reply comes back as a Download`, async () => {
      const up = createTestClient(UploadService, { services: [new UploadService()], client: { httpVersion } });
      const down = createTestClient(DownloadService, { services: [new DownloadService()], client: { httpVersion } });
      try {
        const seen = (await up.live("label", new Blob(["hello"]) as unknown as StreamedFile)) as Seen & { label: string };
        assert.equal(seen.size, 5);
        assert.equal(seen.label, "label");
        const d = (await down.echo(new File(["round trip"], "rt.txt", { type: "text/plain" }) as unknown as StreamedFile)) as unknown as Download;
        assert.ok(d instanceof Download);
        assert.equal(d.filename, "rt.txt");
        assert.equal(Buffer.concat((await d.stream().toArray()) as Buffer[]).toString(), "round trip");
      } finally {
        await closeClient(up);
        await closeClient(down);
      }
    });
  }
});
