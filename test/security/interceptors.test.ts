import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  CallContext,
  Code,
  createContextKey,
  createServer,
  Ctx,
  type Interceptor,
  Method,
  Param,
  RpcError,
  Service,
  type TripleServer,
} from "../../src/index.js";
import { JSON_HEADERS, post1 } from "../helpers/http.js";

const TENANT = createContextKey("none", "tenant");

@Service("test.EchoService")
class EchoService {
  @Method()
  async echo(@Param() text: string, @Ctx() ctx: CallContext): Promise<string> {
    return `${text} for ${ctx.get(TENANT)}`;
  }
}

describe("server interceptors", () => {
  let server: TripleServer;
  let url: string;
  const order: string[] = [];
  before(async () => {
    const outer: Interceptor = (next) => async (call) => {
      order.push(`outer in ${call.method.path}`);
      const r = await next(call);
      order.push("outer out");
      return typeof r === "string" ? `${r}!` : r;
    };
    const inner: Interceptor = (next) => async (call) => {
      order.push("inner in");
      const tenant = call.context.requestHeaders.get("x-tenant");
      if (tenant === "evil") throw new RpcError(Code.PermissionDenied, "tenant evil is blocked");
      if (tenant) call.context.set(TENANT, tenant);
      call.context.responseHeaders.set("x-seen-by", "inner");
      const r = await next(call);
      order.push("inner out");
      return r;
    };
    server = createServer({ services: [new EchoService()], interceptors: [outer, inner] });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(() => server.close());

  it("run onion-style, see the method, set context values and response headers", async () => {
    order.length = 0;
    const r = await post1(url, "/test.EchoService/echo", {
      headers: { ...JSON_HEADERS, "x-tenant": "acme" },
      body: '["hi"]',
    });
    assert.equal(r.status, 200);
    assert.equal(r.json(), "hi for acme!");
    assert.equal(r.headers["x-seen-by"], "inner");
    assert.deepEqual(order, ["outer in /test.EchoService/echo", "inner in", "inner out", "outer out"]);
  });

  it("short-circuit with an RpcError", async () => {
    const r = await post1(url, "/test.EchoService/Echo", {
      headers: { ...JSON_HEADERS, "x-tenant": "evil" },
      body: '["hi"]',
    });
    assert.equal(r.status, 403);
    assert.deepEqual(r.json(), { status: 70, message: "tenant evil is blocked", code: "permission_denied" });
  });
});
