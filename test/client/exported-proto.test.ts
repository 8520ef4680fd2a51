import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, createServer, Field, Method, Param, Service, T, toProto, type TripleServer } from "../../src/index.js";

/**
 * A client built from the `.proto` we export for an IDL-less service calls that service over
 * Triple HTTP with JSON (the default) and with protobuf: the one rule is that a derived method
 * answers JSON with its bare result (a Date, a number, an array, a map, any JSON), which the
 * exported schema wraps in a `value` field, and
 * answers protobuf with the derived response message.
 */

class Pet {
  @Field() name!: string;
  @Field() born!: Date;
}

@Service("files.Clock")
class Clock {
  @Method({ returns: Date })
  async now(@Param("offset") offset: number): Promise<Date> {
    return new Date(Date.UTC(2024, 0, 1) + offset);
  }

  @Method({ returns: Number })
  async add(@Param("a") a: number, @Param("b") b: number): Promise<number> {
    return a + b;
  }

  @Method({ returns: T.map(Number) })
  async counts(@Param("n") n: number): Promise<Map<string, number>> {
    return new Map([
      ["a", n],
      ["value", 2],
    ]);
  }

  @Method({ returns: T.record(String) })
  async labels(@Param("n") n: number): Promise<Record<string, string>> {
    return { zone: `eu-${n}` };
  }

  @Method()
  async anything(@Param("n") n: number): Promise<unknown> {
    return { hello: n, list: [1, "x"] };
  }

  @Method({ returns: Pet })
  async pet(@Param("name") name: string): Promise<Pet> {
    return { name, born: new Date(Date.UTC(2020, 5, 1)) };
  }
}

describe("a client built from the exported .proto calls the IDL-less service over Triple", () => {
  let server: TripleServer;
  let dir: string;
  let file: string;
  before(async () => {
    server = createServer({ services: [new Clock()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    dir = mkdtempSync(join(tmpdir(), "triple-exported-"));
    file = join(dir, "clock.proto");
    writeFileSync(file, toProto(Clock));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const contentType of ["json", "proto"] as const) {
    it(`contentType ${contentType}: a Date result, a scalar result and a class result`, async () => {
      const c: any = createClient({ proto: file, service: "files.Clock" }, { providers: server.url, contentType, retries: 0 });
      try {
        const now = await c.now({ offset: 1000 });
        const seconds = Number(now.value.seconds);
        assert.equal(seconds, Date.UTC(2024, 0, 1) / 1000 + 1);
        assert.equal((await c.add({ a: 2, b: 3 })).value, 5);
        const pet = await c.pet({ name: "rex" });
        assert.equal(pet.name, "rex");
        assert.equal(Number(pet.born.seconds), Date.UTC(2020, 5, 1) / 1000);
        // Object-shaped bare results (a map, a record, any JSON) are the value too, not a message.
        assert.deepEqual({ ...(await c.counts({ n: 5 })).value }, { a: 5, value: 2 });
        assert.deepEqual({ ...(await c.labels({ n: 1 })).value }, { zone: "eu-1" });
        const any = (await c.anything({ n: 7 })).value;
        assert.equal(any.structValue.fields.hello.numberValue, 7);
        assert.equal(any.structValue.fields.list.listValue.values[1].stringValue, "x");
      } finally {
        closeClient(c);
      }
    });
  }
});
