import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, closeClient, Code, createClient, RpcError } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type GrpcJsServer, startGrpcJsServer } from "./grpc-js-server.js";
import { collect, values } from "./services.js";

describe("our gRPC client against a @grpc/grpc-js server", () => {
  let server: GrpcJsServer;
  const clients: object[] = [];
  const make = (extra: Partial<Parameters<typeof createClient>[1]> = {}): Client<GreetServiceImpl> => {
    const c = createClient(GreetServiceImpl, { providers: [server.address], protocol: "grpc", ...extra });
    clients.push(c);
    return c;
  };
  before(async () => {
    server = await startGrpcJsServer();
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await server.close();
  });

  for (const contentType of ["grpc+proto"] as const) {
    it(`unary (${contentType})`, async () => {
      const c = make({ contentType });
      assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
    });
  }

  it("server streaming", async () => {
    const got = await collect(make().greetServerStream({ name: "ann" }));
    assert.deepEqual(
      got.map((g) => g.greeting),
      ["hello, ann (1/3)", "hello, ann (2/3)", "hello, ann (3/3)"],
    );
  });

  it("client streaming (async and sync iterables, and an empty stream)", async () => {
    const c = make();
    assert.deepEqual(await c.greetClientStream(values([{ name: "a" }, { name: "b" }, { name: "c" }])), { greeting: "a, b, c" });
    assert.deepEqual(await c.greetClientStream([{ name: "x" }]), { greeting: "x" });
    assert.deepEqual(await c.greetClientStream(values([])), { greeting: "" });
  });

  it("bidi streaming, interleaved: each answer arrives before the next request is sent", async () => {
    const c = make();
    const answers: string[] = [];
    let waiting: (() => void) | undefined;
    async function* requests() {
      for (const name of ["one", "two", "three"]) {
        yield { name };
        await new Promise<void>((r) => (waiting = r));
      }
    }
    for await (const r of c.greetStream(requests())) {
      answers.push(r.greeting);
      waiting?.();
    }
    assert.deepEqual(answers, ["one", "two", "three"]);
  });

  it("metadata: call and client metadata reach the server; response headers and trailers reach the caller", async () => {
    const c = make({ metadata: { "x-client": "c1" }, token: "tok", version: "1.0.0", group: "g" });
    let headers: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    await c.greet(
      { name: "triple" },
      { metadata: { "x-call": "v", "x-bin": Buffer.from([0, 1, 2]).toString("base64") }, onHeaders: (h) => (headers = h), onTrailers: (t) => (trailers = t) },
    );
    const md = server.last.metadata ?? {};
    assert.equal(md["x-client"], "c1");
    assert.equal(md["x-call"], "v");
    assert.equal(md.authorization, "Bearer tok");
    assert.equal(md["tri-protocol-version"], "1.0.0");
    assert.equal(md["tri-service-version"], "1.0.0");
    assert.equal(md["tri-service-group"], "g");
    assert.equal(headers["x-header"], "h1");
    assert.equal(trailers["x-trailer"], "t1");
  });

  it("deadlines: grpc-timeout reaches the server; a slow call fails with deadline_exceeded, not retried", async () => {
    const c = make({ timeoutMs: 5000 });
    await c.greet({ name: "triple" });
    const deadline = server.last.deadline;
    assert.ok(deadline instanceof Date || typeof deadline === "number");
    const left = Number(deadline) - Date.now();
    assert.ok(left > 3000 && left <= 5100, `deadline ${left} ms away`);

    const before = server.calls.Greet;
    const err = (await c.greet({ name: "slow" }, { timeoutMs: 200 }).catch((e) => e)) as RpcError;
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, Code.DeadlineExceeded);
    assert.equal(server.calls.Greet - before, 1, "a deadline is never retried");
  });

  it("errors: code, percent-decoded message, details and trailers as metadata", async () => {
    const c = make({ retries: 0 });
    const err = (await c.greet({ name: "details" }).catch((e) => e)) as RpcError;
    assert.equal(err.code, Code.InvalidArgument);
    assert.match(err.message, /bad request: 100% ünïcødé$/);
    assert.equal(err.details.length, 1);
    assert.equal(err.details[0].type, "google.rpc.BadRequest");
    assert.deepEqual([...err.details[0].value], [1, 2, 3]);
    const cause = (err.cause ?? err) as RpcError;
    assert.equal((cause.metadata ?? err.metadata)["x-trailer"], "t1");
  });

  it("a handler error is unknown with the handler's text; failover tries 3 times", async () => {
    const c = make();
    const before = server.calls.Greet;
    const err = (await c.greet({ name: "nobody" }).catch((e) => e)) as RpcError;
    assert.equal(err.code, Code.Unknown);
    assert.equal(
      err.message,
      `Failed to invoke the method Greet in the service greet.GreetService. Tried 2 times (3 attempts) of the providers [${server.address}] (1/1) from the registry static on the consumer 127.0.0.1 using the triple-rpc version 0.1.0. Last error is unknown: name is not right: nobody`,
    );
    assert.equal(server.calls.Greet - before, 3);
  });

  it("cancelling a stream with an AbortSignal", async () => {
    const c = make();
    const ac = new AbortController();
    const got: string[] = [];
    async function* forever() {
      yield { name: "first" };
      await new Promise(() => {});
    }
    const err = await (async () => {
      for await (const r of c.greetStream(forever(), { signal: ac.signal })) {
        got.push(r.greeting);
        ac.abort();
      }
    })().catch((e) => e as RpcError);
    assert.deepEqual(got, ["first"]);
    assert.equal((err as RpcError).code, Code.Cancelled);
  });
});
