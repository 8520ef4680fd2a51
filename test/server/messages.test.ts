import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";

/** Messages a new user hit that did not say what to change (issue: rough edges). */

@Service("messages.Big")
class Big {
  @Method()
  async echo(@Param(BigInt) n: bigint): Promise<string> {
    return n.toString();
  }
}

describe("error messages that say what to change", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new Big()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  it("a bigint beyond 2^53 sent as a JSON number: the message explains the rounding and the fix", async () => {
    const r = await post1(server.url, "/messages.Big/echo", { headers: { "content-type": "application/json" }, body: "[12345678901234567890]" });
    assert.equal(r.status, 400);
    assert.match(
      r.json().message,
      /parameter #1 must be an integer; 12345678901234567000 is beyond JavaScript's exact integers \(±2\^53\), so the number was rounded while parsing: send it as a JSON string/,
    );
    const ok = await post1(server.url, "/messages.Big/echo", { headers: { "content-type": "application/json" }, body: '["12345678901234567890"]' });
    assert.equal(ok.json(), "12345678901234567890");
  });

  it("registering two instances of an anonymous service class names it readably", () => {
    // Decorators applied by hand: legacy decorators cannot decorate class expressions.
    const Cls = (() =>
      class {
        async ping(): Promise<string> {
          return "pong";
        }
      })();
    assert.equal(Cls.name, "");
    Method()(Cls.prototype, "ping", Object.getOwnPropertyDescriptor(Cls.prototype, "ping")!);
    Service("messages.Anon")(Cls);
    assert.throws(
      () => createServer({ services: [new Cls(), new Cls()] }),
      (e: Error) => {
        assert.doesNotMatch(e.message, /of \)/);
        assert.match(e.message, /service messages\.Anon is registered twice \(two instances of an anonymous class\)/);
        return true;
      },
    );
  });
});
