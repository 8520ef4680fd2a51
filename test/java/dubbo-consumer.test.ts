import * as assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { echoed, InteropProvider, javaView, QUIET, samplePerson, type Seen } from "./dubbo-interop.js";
import { type JavaAnswer, JavaConsumer, dubboJavaSkip, requireDubboJava } from "./dubbo-peer.js";

/**
 * A real Dubbo 3.3.1 Java consumer (test/java/dubbo JavaConsumer, one JVM for the file) calls our
 * provider of the plain Java interface org.triplerpc.interop.Interop over tri://127.0.0.1, with
 * hessian2 and with fastjson2: values of every field kind both ways, the four call kinds as Dubbo
 * declares them for interfaces, our RpcError codes as the status Java reads, timeouts,
 * attachments both ways, version and group.
 */

/** What Java's Describe prints for Samples.person() (run Java to Java, and the same for ours). */
const SAMPLE =
  "Person{name=String:Ann,age=33,id=9007199254740993,score=9.75,active=true,rank=null,born=Date(1700000000123)," +
  "tags=[String:a,String:é,String:😀],attrs={String:x=Integer:1, String:y=Integer:-2000000000},address=Address{city=String:Zürich,zip=8001}," +
  "places=[Address{city=String:Lyon,zip=69001},Address{city=String:,zip=0}],friend=Person{name=String:Bob,age=-2147483648," +
  "id=-9223372036854775808,score=-0.5,active=false,rank=Integer:7,born=Date(-946080000000),tags=null,attrs={},address=null,places=[],friend=null}}";

describe("a Dubbo Java consumer calls our provider over tri://", { skip: dubboJavaSkip() }, () => {
  let server: TripleServer;
  let java: JavaConsumer;
  let seen: Seen;
  let url: string;

  before(async () => {
    requireDubboJava();
    const main = new InteropProvider("ts-default");
    seen = main.seen;
    server = createServer({
      logger: QUIET,
      services: [
        main,
        { implementation: new InteropProvider("ts-v2", seen), version: "2.0.0" },
        { implementation: new InteropProvider("ts-blue", seen), group: "blue" },
      ],
    });
    const { port } = await server.listen({ port: 0, host: "127.0.0.1" });
    url = `tri://127.0.0.1:${port}`;
    java = await JavaConsumer.start();
  });
  after(async () => {
    await java?.stop();
    await server?.close();
  });

  it("the mirror of Java's Describe prints our sample as Java prints its own", () => {
    assert.equal(javaView(samplePerson()), SAMPLE);
  });

  it("hessian2 and fastjson2 calls of one method at once: each answered in its own serialization", async () => {
    // (A Dubbo 3.3.1 Java provider keeps the answer's serialization on the method object all
    // calls share, so it can mix them up; ours decides per call.)
    const calls = Array.from({ length: 24 }, (_, i) => java.call({ url, serialization: i % 2 ? "fastjson2" : "hessian2", op: "echo" }));
    for (const a of await Promise.all(calls)) assert.equal(a.ok, javaView(echoed(samplePerson())), JSON.stringify(a.error));
  });

  for (const serialization of ["hessian2", "fastjson2"] as const)
    describe(serialization, () => {
      const call = (cmd: Record<string, unknown>): Promise<JavaAnswer> => java.call({ url, serialization, ...cmd });
      const ok = (cmd: Record<string, unknown>): Promise<unknown> => java.ok({ url, serialization, ...cmd });

      it("unary: a string, and a POJO of every field kind both ways (Java's sample in, ours out, as each side's types)", async () => {
        assert.equal(await ok({ op: "hello", name: "ann" }), "hello ann from ts-default");
        // Java's Samples.person() reaches the handler as our Person, field for field (a long past 2^53, nulls, 1940).
        const echoedByUs = await ok({ op: "echo" });
        assert.deepEqual(seen.echo.at(-1), samplePerson());
        // What Java got back: the same changes Java's own echo makes.
        assert.equal(echoedByUs, javaView(echoed(samplePerson())));
        // A Person built by our handler, as Java reads it: Integer values in the map, null fields, Date.
        assert.equal(await ok({ op: "sample" }), SAMPLE);
      });

      it("unary: primitives (int, long past 2^53, double, boolean, a null String) and a List of classes into a Map<String, Long>", async () => {
        assert.equal(await ok({ op: "mix", i: 2147483647, l: "9007199254740993", d: 1.5, b: true, s: "abc" }), "9007201402224645");
        // No s: Java sends null, our optional parameter is undefined (-1).
        assert.equal(await ok({ op: "mix", i: -1, l: "-9007199254740993", d: -2.5, b: false }), "-9007199254740997");
        assert.equal(await ok({ op: "index" }), "{String:Ann=Long:9007199254740993, String:Bob=Long:-9223372036854775808}");
      });

      it("server stream (void m(T, StreamObserver<R>)), client stream and bidi (StreamObserver<T> m(StreamObserver<R>))", async () => {
        assert.deepEqual(await ok({ op: "count", n: 4 }), ["#0", "#1", "#2", "#3"]);
        assert.deepEqual(await ok({ op: "count", n: 0 }), []);
        assert.deepEqual(await ok({ op: "total", xs: [1, 2, 3, 40] }), [46]);
        const renamed = (await ok({ op: "rename" })) as string[];
        const ann = samplePerson();
        ann.name = "Ann?";
        const bob = samplePerson().friend!;
        bob.name = "Bob?";
        assert.deepEqual(renamed, [javaView(ann), javaView(bob)]);
      });

      it("our RpcError codes reach Java as the gRPC status of a StatusRpcException, with Dubbo's own code where it has one", async () => {
        // status name → Dubbo's RpcException code (TriRpcStatus.triCodeToDubboCode)
        const expected: Record<string, [string, number]> = {
          InvalidArgument: ["INVALID_ARGUMENT", 0],
          NotFound: ["NOT_FOUND", 0],
          FailedPrecondition: ["FAILED_PRECONDITION", 0],
          PermissionDenied: ["PERMISSION_DENIED", 4],
          Unauthenticated: ["UNAUTHENTICATED", 0],
          ResourceExhausted: ["RESOURCE_EXHAUSTED", 0],
          Unavailable: ["UNAVAILABLE", 1],
          Unimplemented: ["UNIMPLEMENTED", 11],
          DeadlineExceeded: ["DEADLINE_EXCEEDED", 2],
          Internal: ["INTERNAL", 0],
          plain: ["UNKNOWN", 0],
        };
        const answers = await Promise.all(Object.keys(expected).map((kind) => call({ op: "fail", kind })));
        for (const [i, [kind, [status, code]]] of Object.entries(expected).entries()) {
          const e = answers[i]!.error;
          assert.ok(e, `${kind}: an error`);
          assert.equal(e.status, status, kind);
          assert.equal(e.statusCode, code, kind);
          assert.equal(e.description, kind === "plain" ? "a plain Error" : `failing with ${kind}`, kind);
        }
      });

      it("timeouts: Java's timeout reaches our handler as its deadline, which aborts it; Java gives up at its timeout", async () => {
        const before = seen.slow.length;
        const a = await call({ op: "slow", ms: 8000, timeout: 400 });
        // Java's own timer (RpcException.TIMEOUT_EXCEPTION) or our deadline_exceeded answer
        // (a StatusRpcException DEADLINE_EXCEEDED, Dubbo code TIMEOUT_EXCEPTION), whichever comes first.
        assert.ok(a.error?.code === 2 || (a.error?.status === "DEADLINE_EXCEEDED" && a.error.statusCode === 2), JSON.stringify(a.error));
        // Before our handler's own 8 s (less a margin): a timeout ended it (one-sided, generous).
        assert.ok(a.ms < 7500, `Java waited ${a.ms} ms`);
        const entry = seen.slow[before]!;
        assert.ok(entry.remainingMs !== undefined && entry.remainingMs > 0 && entry.remainingMs <= 400, `deadline ${entry.remainingMs} ms`);
        for (let i = 0; i < 50 && entry.aborted === undefined; i++) await sleep(20);
        assert.equal(entry.aborted, "deadline_exceeded");
        // Within the timeout the call answers, and the handler saw Java's timeout (the reference's 15 s).
        assert.match(String(await ok({ op: "slow", ms: 0 })), /^timeout=(\d+)$/);
        assert.ok(Number(seen.slow.at(-1)!.remainingMs) > 10_000);
      });

      it("attachments both ways: Java's client attachment is a request header, our response trailer is Java's server attachment", async () => {
        assert.deepEqual(await ok({ op: "attachment", key: "x-trace-id", value: "from java 42" }), { result: "from java 42", reply: "ts saw from java 42" });
        assert.deepEqual(seen.headers.at(-1), { "x-trace-id": "from java 42" });
      });

      it("version and group select our registration; a version we do not serve is unimplemented, never another one", async () => {
        assert.equal(await ok({ op: "whoami" }), "ts-default");
        assert.equal(await ok({ op: "whoami", version: "2.0.0" }), "ts-v2");
        assert.equal(await ok({ op: "whoami", group: "blue" }), "ts-blue");
        const a = await call({ op: "whoami", version: "3.0.0" });
        assert.equal(a.error?.status, "UNIMPLEMENTED");
        assert.match(a.error?.description ?? "", /version "3\.0\.0"/);
        const g = await call({ op: "whoami", group: "red" });
        assert.equal(g.error?.status, "UNIMPLEMENTED");
      });
    });
});
