import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, Code, closeClient, createClient, RpcError } from "../../src/index.js";
import type { JavaException } from "../../src/message/java-serialization.js";
import { freePort } from "../helpers/zookeeper.js";
import { copy, echoed, Interop, javaView, QUIET, samplePerson } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaProvider, requireDubboJava } from "./dubbo-peer.js";

/**
 * Our typed client calls a real Dubbo 3.3.1 Java provider (test/java/dubbo JavaProvider, one JVM
 * for the file) of the plain Java interface org.triplerpc.interop.Interop over tri://127.0.0.1,
 * with `serialization: "hessian2"` and `"fastjson2"` (Dubbo's wrapper over gRPC, as a Dubbo Java
 * consumer calls), and with the Triple default (JSON over HTTP, which Dubbo 3.3 answers through
 * its REST layer).
 *
 * Dubbo 3.3.1's provider keeps the serialization to answer in on its method object shared by all
 * calls (ReflectionPackableMethod's WrapResponsePack.requestSerialize), so a hessian2 call and a
 * fastjson2 call of one method at the same moment can be answered in each other's: its own Java
 * consumers then fail ("Unexpected serialization type"); ours read the serialization the answer
 * names (one case below runs them at once).
 */

/** Describe.of(p) once the Java echo() changed it. */
const echoedView = (): string => javaView(echoed(samplePerson()));

const isRpc = (code: Code, message?: RegExp) => (e: unknown) => {
  assert.ok(e instanceof RpcError, String(e));
  assert.equal(e.code, code, e.message);
  if (message) assert.match(e.message, message);
  return true;
};

describe("our client calls a Dubbo Java provider over tri://", { skip: dubboJavaSkip() }, () => {
  let java: JavaProvider;
  before(async () => {
    requireDubboJava();
    java = await JavaProvider.start(await freePort());
  });
  after(() => java?.stop());

  for (const serialization of ["hessian2", "fastjson2"] as const) {
    describe(serialization, () => {
      let c: Client<Interop>;
      before(() => {
        c = createClient(Interop, { providers: [java.url], serialization, retries: 0, timeoutMs: 15_000, logger: QUIET });
      });
      after(() => closeClient(c));
      const other = (opts: { version?: string; group?: string }) =>
        createClient(Interop, { providers: [java.url], serialization, retries: 0, timeoutMs: 15_000, logger: QUIET, ...opts });

      it("unary: a string, and a POJO of every field kind both ways (ours in as Java's types, Java's out as ours)", async () => {
        assert.equal(await c.hello("ann"), "hello ann from default");
        // Our sample, as Java's Describe prints what it received: Integer map values, nulls, a long past 2^53, 1940.
        assert.equal(await c.describe(samplePerson()), javaView(samplePerson()));
        // Java's echo of our sample, read back into our classes.
        const back = await c.echo(samplePerson());
        assert.deepEqual(back, echoed(samplePerson()));
        assert.equal(javaView(back), echoedView());
        // A person Java built (Samples.person()) is our sample, class for class.
        assert.deepEqual(await c.sample(), samplePerson());
      });

      it("unary: primitives (int, long past 2^53, double, boolean, a null String) and a List of classes into a Map<String, Long>", async () => {
        assert.equal(await c.mix(2147483647, 9007199254740993n, 1.5, true, "abc"), 9007201402224645n);
        assert.equal(await c.mix(-1, -9007199254740993n, -2.5, false, undefined), -9007199254740997n);
        const s = samplePerson();
        assert.deepEqual(
          await c.index([s, s.friend!]),
          new Map([
            ["Ann", 9007199254740993n],
            ["Bob", -(2n ** 63n)],
          ]),
        );
      });

      it("server stream, client stream and bidi (StreamObserver methods)", async () => {
        const got: string[] = [];
        for await (const x of c.count(4)) got.push(x);
        assert.deepEqual(got, ["#0", "#1", "#2", "#3"]);
        assert.equal(await c.total([1, 2, 3, 40]), 46);
        const names: string[] = [];
        for await (const p of c.rename([samplePerson(), copy(samplePerson().friend!)])) {
          assert.equal(javaView(p).replace(/\?/, ""), javaView(names.length === 0 ? samplePerson() : samplePerson().friend));
          names.push(p.name!);
        }
        assert.deepEqual(names, ["Ann?", "Bob?"]);
      });

      it("a Java exception reaches us as an RpcError with its class, message and fields", async () => {
        const javaError =
          (cls: string, msg: string, fields: Record<string, unknown> = {}) =>
          (e: unknown) => {
            isRpc(Code.Unknown)(e);
            const err = e as RpcError;
            assert.equal(err.message, `${cls}: ${msg}`);
            assert.equal(err.rawMessage, msg);
            const cause = err.cause as JavaException;
            assert.equal(cause.javaClass, cls);
            for (const [k, v] of Object.entries(fields)) assert.equal(cause.fields[k], v, k);
            assert.ok(Array.isArray(cause.fields.stackTrace), "the stack trace travels too");
            return true;
          };
        await assert.rejects(c.fail("illegal"), javaError("java.lang.IllegalArgumentException", "bad kind: illegal"));
        await assert.rejects(c.fail("npe"), javaError("java.lang.NullPointerException", "nothing here"));
        await assert.rejects(c.fail("custom"), javaError("org.triplerpc.interop.InteropException", "custom failure", { reason: 42 }));
        assert.equal(await c.fail("none"), "no failure: none");
      });

      it("timeouts: ours reaches Java as its timeout (grpc-timeout), and the call ends at ours", async () => {
        const seen = Number(/^timeout=(\d+)$/.exec(await c.slow(0, { timeoutMs: 3000 }))?.[1]);
        assert.ok(seen > 2000 && seen <= 3000, `Java saw a timeout of ${seen} ms`);
        const t0 = Date.now();
        await assert.rejects(c.slow(5000, { timeoutMs: 300 }), isRpc(Code.DeadlineExceeded));
        // Before Java's own 5 s (less a margin): our 300 ms deadline ended it (one-sided, generous).
        assert.ok(Date.now() - t0 < 4900, `gave up after ${Date.now() - t0} ms`);
      });

      it("attachments both ways: our metadata is Java's server attachment, Java's reply attachment reaches onTrailers", async () => {
        let trailers: Readonly<Record<string, unknown>> = {};
        const r = await c.attachment("x-trace-id", { metadata: { "x-trace-id": "from ts 42" }, onTrailers: (t) => (trailers = t) });
        assert.equal(r, "from ts 42");
        assert.equal(trailers["x-reply"], "java saw from ts 42");
      });

      it("version and group select Java's registration (a version Java lacks falls back to its default: Dubbo's rule)", async () => {
        assert.equal(await c.whoami(), "default");
        const v2 = other({ version: "2.0.0" });
        const blue = other({ group: "blue" });
        const v3 = other({ version: "3.0.0" });
        try {
          assert.equal(await v2.whoami(), "v2");
          assert.equal(await blue.whoami(), "blue");
          // Dubbo's Triple server resolves an unknown version+group to the service registered
          // without either (dubbo.protocol.triple.resolve-fallback-to-default, on by default).
          assert.equal(await v3.whoami(), "default");
        } finally {
          for (const x of [v2, blue, v3]) closeClient(x);
        }
      });
    });
  }

  it("hessian2 and fastjson2 calls of one method at once: every answer read (Dubbo 3.3.1 can swap their serializations)", async () => {
    const h = createClient(Interop, { providers: [java.url], serialization: "hessian2", retries: 0, logger: QUIET });
    const f = createClient(Interop, { providers: [java.url], serialization: "fastjson2", retries: 0, logger: QUIET });
    try {
      const calls = Array.from({ length: 120 }, (_, i) => (i % 2 ? h : f).echo(samplePerson()));
      for (const p of await Promise.all(calls)) assert.deepEqual(p, echoed(samplePerson()));
    } finally {
      closeClient(h);
      closeClient(f);
    }
  });

  describe("the Triple default (JSON over HTTP/2, no serialization option): what Dubbo 3.3.1's REST layer answers", () => {
    let c: Client<Interop>;
    before(() => {
      c = createClient(Interop, { providers: [java.url], retries: 0, timeoutMs: 15_000, logger: QUIET });
    });
    after(() => closeClient(c));

    it("several parameters and one POJO parameter bind; longs within 2^53 come back as numbers", async () => {
      assert.equal(await c.mix(7, 35n, 0.5, true, "ab"), 45n);
      assert.equal(await c.describe(samplePerson()), javaView(samplePerson()));
    });

    it("a long past 2^53 in Java's JSON answer is refused with a message saying why, never rounded", async () => {
      await assert.rejects(c.sample(), isRpc(Code.Internal, /beyond JavaScript's exact integers/));
      await assert.rejects(c.mix(2147483647, 9007199254740993n, 1.5, true, "abc"), isRpc(Code.Internal, /beyond JavaScript's exact integers/));
    });

    it("a lone String parameter gets the whole JSON body (Dubbo 3.3.1 binds the body of a one-parameter method to it as text)", async () => {
      assert.match(await c.hello("ann"), /^hello \["ann"\] from /);
    });

    it("version and group select a registration Java serves; otherwise another registration answers, not the one without either", async () => {
      const clients = [{ version: "2.0.0" }, { group: "blue" }, {}, { version: "3.0.0" }].map((o) =>
        createClient(Interop, { providers: [java.url], retries: 0, timeoutMs: 15_000, logger: QUIET, ...o }),
      );
      try {
        const [v2, blue, none, v3] = await Promise.all(clients.map((x) => x.whoami()));
        assert.deepEqual([v2, blue], ["v2", "blue"]);
        // Dubbo 3.3.1's REST routing (the gRPC path answers "default" here, see above).
        assert.notEqual(none, "default");
        assert.notEqual(v3, "default");
      } finally {
        for (const x of clients) closeClient(x);
      }
    });

    it("streams need Dubbo's wrapper: without a serialization option a Java provider cannot read them", async () => {
      const drain = async () => {
        for await (const _ of c.count(2)) {
          // nothing
        }
      };
      await assert.rejects(drain(), (e: unknown) => e instanceof RpcError);
    });
  });
});
