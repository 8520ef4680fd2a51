import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, Code, closeClient, createClient, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { freePort } from "../helpers/zookeeper.js";
import { InteropProvider, Interop, paramsView, QUIET, sampleTypes, type Seen, typesView } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaConsumer, JavaProvider, requireDubboJava } from "./dubbo-peer.js";

/**
 * The Java types an estate's interfaces carry, both ways against a real Dubbo 3.3.1 (one Java
 * provider and one Java consumer for the file), in hessian2 and fastjson2: BigDecimal exactly
 * (40 digits, scale 20; 1E+3; 0.00), the java.time classes to the nanosecond (1969, 2101, a
 * ZonedDateTime on Europe/Berlin's spring change), Duration, Timestamp, an enum, short/byte/
 * float/char and their boxes, Set, TreeMap, LinkedHashMap, primitive arrays, Map<String, Address>,
 * empty and null collections. The JVMs run in UTC: fastjson2 writes a Timestamp as a local
 * date-time of the JVM's zone, which we read as UTC (docs/schema.md).
 */
const UTC = ["-Duser.timezone=UTC"];

describe("Java value classes both ways with a real Dubbo Java", { skip: dubboJavaSkip() }, () => {
  let server: TripleServer;
  let javaProvider: JavaProvider;
  let java: JavaConsumer;
  let url: string;
  let seen: Seen;

  before(async () => {
    requireDubboJava();
    const provider = new InteropProvider("ts-default");
    seen = provider.seen;
    seen.types = [];
    server = createServer({ logger: QUIET, services: [provider] });
    const { port } = await server.listen({ port: 0, host: "127.0.0.1" });
    url = `tri://127.0.0.1:${port}`;
    [javaProvider, java] = await Promise.all([JavaProvider.start(await freePort(), {}, UTC), JavaConsumer.start("java-types-consumer", undefined, UTC)]);
  });
  after(async () => {
    await Promise.all([java?.stop(), javaProvider?.stop()]);
    await server?.close();
  });

  const EXPECTED = typesView(sampleTypes());

  for (const serialization of ["hessian2", "fastjson2"] as const) {
    describe(serialization, () => {
      const ok = (cmd: Record<string, unknown>, to = url): Promise<unknown> => java.ok({ url: to, serialization, ...cmd });
      let c: Client<Interop>;
      before(() => {
        c = createClient(Interop, { providers: [javaProvider.url], serialization, retries: 0, timeoutMs: 15_000, logger: QUIET });
      });
      after(() => closeClient(c));

      it("Java to Java: TypeSamples as Java describes it is what our mirror of it prints", async () => {
        assert.equal(await ok({ op: "typesDescribe" }, `tri://127.0.0.1:${javaProvider.port}`), EXPECTED);
      });

      it("a Java consumer → our provider: Java's values reach the handler exactly, ours reach Java as its own classes", async () => {
        // Java's sample in, described by our handler as Java would.
        assert.equal(await ok({ op: "typesDescribe" }), EXPECTED);
        // Our handler answers what it got: Java reads it back, class for class.
        assert.equal(await ok({ op: "types" }), EXPECTED);
        const got = seen.types!.at(-1)!;
        assert.equal(got.dec, "-12345678901234567890.12345678901234567890");
        assert.deepEqual(got.decs, ["1.10", "0", "1E+3", "-0.000001", "1E-7"]);
        assert.equal(got.time, "10:15:30.123456789");
        assert.equal(got.zoned, "2024-03-31T03:30+02:00[Europe/Berlin]");
        assert.deepEqual(got.longs, [-(2n ** 63n), 2n ** 63n - 1n]);
        // Our sample, built in TypeScript, as Java reads it.
        assert.equal(await ok({ op: "typesSample" }), EXPECTED);
        // Each type as a parameter of its own (a Java method taking LocalDateTime, Duration, an enum, short, char…).
        assert.equal(await ok({ op: "params" }), paramsView(sampleTypes()));
        assert.equal(await ok({ op: "addDecimal", a: "0.1", b: "0.2" }), "0.3");
        assert.equal(
          await ok({ op: "addDecimal", a: "99999999999999999999.99999999999999999999", b: "0.00000000000000000001" }),
          "100000000000000000000.00000000000000000000",
        );
        assert.equal(await ok({ op: "later", z: "2024-03-31T01:30+01:00[Europe/Berlin]", d: "PT1H" }), "2024-03-31T03:30+02:00[Europe/Berlin]");
      });

      it("our client → a Java provider: our values reach Java's methods as its classes, Java's come back exactly", async () => {
        assert.equal(await c.typesDescribe(sampleTypes()), EXPECTED);
        assert.equal(typesView(await c.typesSample()), EXPECTED);
        const back = await c.types(sampleTypes());
        assert.equal(typesView(back), EXPECTED);
        assert.equal(back.dec, "-12345678901234567890.12345678901234567890");
        assert.equal(back.instant, "1969-12-31T23:59:59.000000005Z");
        assert.equal(back.duration, "PT-4.9999997S");
        assert.equal(back.c, "é");
        assert.deepEqual(back.dates, []);
        assert.equal(back.noSet, undefined);
        const s = sampleTypes();
        assert.equal(
          await c.params(
            s.dec!,
            s.date!,
            s.time!,
            s.dateTime!,
            s.instant!,
            s.offsetDateTime!,
            s.zoned!,
            s.duration!,
            s.timestamp!,
            s.color!,
            s.s,
            s.b,
            s.c,
            1.5,
          ),
          paramsView(s),
        );
        assert.equal(await c.addDecimal("0.1", "0.2"), "0.3");
        assert.equal(await c.addDecimal("1.10", "-1E+3"), "-998.90");
        assert.equal(await c.later("2024-03-31T01:30+01:00[Europe/Berlin]", "PT1H"), "2024-03-31T03:30+02:00[Europe/Berlin]");
        // Autumn's change: the first 02:30 (+02:00) plus an hour is the second one (+01:00). hessian2
        // carries the offset; fastjson2 writes the zone alone, so the second 02:30 reads as the first
        // (Java to Java too: docs/schema.md).
        const second = serialization === "hessian2" ? "+01:00" : "+02:00";
        assert.equal(await c.later("2024-10-27T02:30+02:00[Europe/Berlin]", "PT1H"), `2024-10-27T02:30${second}[Europe/Berlin]`);
      });

      it("bad values are refused before they leave, naming the parameter and what is wrong", async () => {
        const s = sampleTypes();
        const bad = async (f: () => Promise<unknown>, re: RegExp) =>
          assert.rejects(f(), (e: unknown) => e instanceof RpcError && e.code === Code.InvalidArgument && re.test(e.message));
        await bad(() => c.addDecimal("1.2.3", "1"), /parameter #1 \(a\).*decimal/);
        await bad(() => c.addDecimal("1", "1E+99999999999"), /parameter #2 \(b\)/);
        await bad(
          () =>
            c.params(
              s.dec!,
              "2024-13-01",
              s.time!,
              s.dateTime!,
              s.instant!,
              s.offsetDateTime!,
              s.zoned!,
              s.duration!,
              s.timestamp!,
              s.color!,
              s.s,
              s.b,
              s.c,
              1.5,
            ),
          /parameter #2 \(ld\).*month 13/,
        );
        await bad(
          () =>
            c.params(s.dec!, s.date!, s.time!, s.dateTime!, s.instant!, s.offsetDateTime!, s.zoned!, s.duration!, s.timestamp!, "PURPLE", s.s, s.b, s.c, 1.5),
          /parameter #10 \(c\)/,
        );
      });
    });
  }
});
