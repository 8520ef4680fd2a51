import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  CallContext,
  type ClientInterceptor,
  Code,
  closeClient,
  createClient,
  createServer,
  Ctx,
  Method,
  Param,
  RpcError,
  ServerStream,
  Service,
  type TripleServer,
} from "../../src/index.js";

@Service("test.MetaEcho")
class MetaEcho {
  @Method()
  async echo(@Param() text: string, @Ctx() ctx: CallContext): Promise<string> {
    ctx.responseHeaders.set("x-served-by", "meta-echo");
    return `${text} trace=${ctx.requestHeaders.get("x-trace-id") ?? "none"}`;
  }

  @ServerStream()
  async *count(@Param() n: number, @Ctx() ctx: CallContext): AsyncGenerator<string> {
    for (let i = 1; i <= n; i++) yield `${i} trace=${ctx.requestHeaders.get("x-trace-id") ?? "none"}`;
  }
}

describe("client interceptors", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new MetaEcho()] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  for (const protocol of ["triple", "grpc"] as const) {
    it(`${protocol}: add request metadata, see the method and response metadata, onion order`, async () => {
      const seen: string[] = [];
      const outer: ClientInterceptor = (next) => async (call) => {
        seen.push(`outer ${call.method.path}`);
        const r = await next(call);
        seen.push(`outer saw x-served-by=${call.responseHeaders?.["x-served-by"]}`);
        return r;
      };
      const tracing: ClientInterceptor = (next) => async (call) => {
        seen.push("tracing");
        call.metadata["x-trace-id"] = "t-42";
        return next(call);
      };
      const client = createClient(MetaEcho, { providers: [server.url], protocol, interceptors: [outer, tracing] });
      try {
        assert.equal(await client.echo("hi"), "hi trace=t-42");
        assert.deepEqual(seen, ["outer /test.MetaEcho/echo", "tracing", "outer saw x-served-by=meta-echo"]);
        const got: string[] = [];
        for await (const m of client.count(2)) got.push(m as string);
        assert.deepEqual(got, ["1 trace=t-42", "2 trace=t-42"]);
      } finally {
        closeClient(client);
      }
    });
  }

  it("short-circuit with an RpcError: the call never leaves the client", async () => {
    let sent = 0;
    const counting: ClientInterceptor = (next) => async (call) => {
      sent++;
      return next(call);
    };
    const deny: ClientInterceptor = () => async (call) => {
      throw new RpcError(Code.PermissionDenied, `blocked ${call.method.name}`);
    };
    const client = createClient(MetaEcho, { providers: [server.url], interceptors: [deny, counting] });
    try {
      await assert.rejects(client.echo("x"), (e: RpcError) => e.code === Code.PermissionDenied && e.message === "blocked echo");
      assert.equal(sent, 0);
    } finally {
      closeClient(client);
    }
  });
});
