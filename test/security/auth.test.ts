import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { CallContext, Code, closeClient, createClient, Ctx, createServer, Method, Param, RpcError, Service, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";

@Service("test.SecureService", { auth: true })
class SecureService {
  @Method()
  async whoami(@Ctx() ctx: CallContext): Promise<string> {
    return ctx.identity?.subject ?? "nobody";
  }

  @Method({ auth: { roles: ["admin"] } })
  async admin(@Param() x: string): Promise<string> {
    return `admin ${x}`;
  }

  @Method({ auth: false })
  async open(): Promise<string> {
    return "open";
  }
}

@Service("test.PublicService")
class PublicService {
  @Method()
  async hello(): Promise<string> {
    return "hello";
  }
}

const TOKENS: Record<string, { subject: string; roles: string[] }> = {
  alice: { subject: "alice", roles: ["admin"] },
  bob: { subject: "bob", roles: [] },
};

describe("bearer auth: authorization: Bearer on HTTP/1.1, HTTP/2 and gRPC", () => {
  let server: TripleServer;
  let url: string;
  let h2: H2;
  before(async () => {
    server = createServer({
      services: [new SecureService(), new PublicService()],
      auth: {
        verify: async (token) => {
          if (token === "banned") throw new RpcError(Code.PermissionDenied, "banned caller");
          return TOKENS[token];
        },
      },
    });
    await server.listen({ port: 0 });
    url = server.url;
    h2 = new H2(url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  for (const v of ["1.1", "2"] as const) {
    const call = (path: string, token?: string, body = "[]") => {
      const headers: Record<string, string> = { ...JSON_HEADERS };
      if (token !== undefined) headers.authorization = token;
      return v === "1.1" ? post1(url, path, { headers, body }) : h2.request(path, { headers, body });
    };

    it(`HTTP/${v}: a valid token reaches the handler with its identity`, async () => {
      const r = await call("/test.SecureService/whoami", "Bearer bob");
      assert.equal(r.status, 200);
      assert.equal(r.json(), "bob");
    });

    it(`HTTP/${v}: missing token → 401 unauthenticated`, async () => {
      const r = await call("/test.SecureService/whoami");
      assert.equal(r.status, 401);
      assert.equal(r.json().code, "unauthenticated");
      assert.match(r.json().message, /missing bearer token/);
      assert.equal(r.headers["www-authenticate"], 'Bearer realm="triple-rpc"');
    });

    it(`HTTP/${v}: unknown token → 401, malformed header → 401`, async () => {
      assert.equal((await call("/test.SecureService/whoami", "Bearer nope")).status, 401);
      const r = await call("/test.SecureService/whoami", "Basic abc");
      assert.equal(r.status, 401);
      assert.match(r.json().message, /malformed authorization/);
    });

    it(`HTTP/${v}: a verified caller without the role → 403 permission_denied`, async () => {
      const r = await call("/test.SecureService/admin", "Bearer bob", '["x"]');
      assert.equal(r.status, 403);
      assert.equal(r.json().code, "permission_denied");
      const ok = await call("/test.SecureService/admin", "Bearer alice", '["x"]');
      assert.equal(ok.status, 200);
      assert.equal(ok.json(), "admin x");
    });

    it(`HTTP/${v}: a verifier rejecting the identity → 403`, async () => {
      const r = await call("/test.SecureService/whoami", "Bearer banned");
      assert.equal(r.status, 403);
      assert.equal(r.json().message, "banned caller");
    });

    it(`HTTP/${v}: auth: false on a method and unprotected services need no token`, async () => {
      assert.equal((await call("/test.SecureService/open")).json(), "open");
      assert.equal((await call("/test.PublicService/hello")).json(), "hello");
    });
  }

  it("gRPC: no token → 16 unauthenticated, missing role → 7 permission_denied, a token reaches the handler", async () => {
    const anonymous = createClient(SecureService, { providers: [url], protocol: "grpc", retries: 0 });
    const bob = createClient(SecureService, { providers: [url], protocol: "grpc", token: "bob", retries: 0 });
    const alice = createClient(SecureService, { providers: [url], protocol: "grpc", token: async () => "alice" });
    try {
      await assert.rejects(anonymous.whoami(), (e: RpcError) => e.code === Code.Unauthenticated && /missing bearer token/.test(e.message));
      await assert.rejects(bob.admin("x"), (e: RpcError) => e.code === Code.PermissionDenied);
      assert.equal(await bob.whoami(), "bob");
      assert.equal(await alice.admin("y"), "admin y");
    } finally {
      closeClient(anonymous);
      closeClient(bob);
      closeClient(alice);
    }
  });
});
