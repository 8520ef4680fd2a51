import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Code } from "../../src/protocol/code.js";
import { type Compression, GRPC_COMPRESSIONS, HTTP_COMPRESSIONS, negotiateEncoding } from "../../src/protocol/compression.js";
import { RpcError } from "../../src/protocol/rpc-error.js";

const pick = (header: string | undefined, supported = HTTP_COMPRESSIONS): string | undefined => negotiateEncoding(header, supported)?.name;

describe("negotiateEncoding", () => {
  it("undefined or empty Accept-Encoding picks nothing", () => {
    assert.equal(pick(undefined), undefined);
    assert.equal(pick(""), undefined);
  });

  it("a single supported coding is picked, names case-insensitive and trimmed", () => {
    assert.equal(pick("gzip"), "gzip");
    assert.equal(pick("br"), "br");
    assert.equal(pick("deflate"), "deflate");
    assert.equal(pick("  GZip  "), "gzip");
    assert.equal(pick("x-gzip"), "gzip");
  });

  it("unknown codings (identity, *, compress, zstd) are skipped", () => {
    assert.equal(pick("identity"), undefined);
    assert.equal(pick("*"), undefined);
    assert.equal(pick("compress, zstd"), undefined);
    assert.equal(pick("zstd, compress, deflate"), "deflate");
  });

  it("the highest q wins", () => {
    assert.equal(pick("gzip;q=0.5, deflate;q=0.8"), "deflate");
    assert.equal(pick("gzip; q=0.2, br ; q=0.9, deflate"), "deflate");
    assert.equal(pick("br;q=0.9, gzip;q=0.1"), "br");
    assert.equal(pick("gzip;q=0.001"), "gzip");
  });

  it("q=0 refuses a coding", () => {
    assert.equal(pick("gzip;q=0"), undefined);
    assert.equal(pick("gzip;q=0, deflate"), "deflate");
    assert.equal(pick("gzip;q=0.0, br;q=0, deflate;q=0"), undefined);
  });

  it("an unparsable q refuses the coding", () => {
    assert.equal(pick("gzip;q=abc"), undefined);
    assert.equal(pick("gzip;q=abc, br"), "br");
  });

  it("ties are broken by preference: gzip > br > deflate", () => {
    assert.equal(pick("deflate, br, gzip"), "gzip");
    assert.equal(pick("deflate, br"), "br");
    assert.equal(pick("deflate;q=0.5, br;q=0.5"), "br");
    assert.equal(pick("br;q=0.5, gzip;q=0.5"), "gzip");
  });

  it("only the supported map is consulted (gRPC has no br)", () => {
    assert.equal(pick("br", GRPC_COMPRESSIONS), undefined);
    assert.equal(pick("br, deflate", GRPC_COMPRESSIONS), "deflate");
  });

  it("property: the pick has the highest q among supported codings, ties by preference, whatever the order", () => {
    const RANK: Record<string, number> = { gzip: 0, br: 1, deflate: 2 };
    const entry = fc.record({
      name: fc.constantFrom("gzip", "br", "deflate", "identity", "compress", "*"),
      q: fc.option(fc.constantFrom(0, 0.1, 0.5, 0.8, 1), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), (entries) => {
        const header = entries.map((e) => (e.q === undefined ? e.name : `${e.name};q=${e.q}`)).join(", ");
        // Best q per supported name (a name listed twice counts at its best).
        const qOf = new Map<string, number>();
        for (const e of entries) {
          if (!(e.name in RANK)) continue;
          const q = e.q ?? 1;
          if (q > 0) qOf.set(e.name, Math.max(q, qOf.get(e.name) ?? 0));
        }
        const want = [...qOf].sort((a, b) => b[1] - a[1] || RANK[a[0]] - RANK[b[0]])[0]?.[0];
        assert.equal(pick(header), want, header);
        assert.equal(pick([...header.split(", ")].reverse().join(", ")), want, `reversed: ${header}`);
      }),
    );
  });
});

/** A payload that compresses to almost nothing. */
const BOMB_SIZE = 4 * 1024 * 1024;
const zeros = Buffer.alloc(BOMB_SIZE);

function assertTooLarge(c: Compression, data: Uint8Array, maxBytes: number): void {
  assert.throws(
    () => c.decompress(data, maxBytes),
    (e: unknown) => {
      assert.ok(e instanceof RpcError, `${c.name}: ${String(e)}`);
      assert.equal(e.code, Code.ResourceExhausted, c.name);
      assert.equal(e.httpStatus, 413, c.name);
      assert.match(e.message, new RegExp(String(maxBytes)));
      return true;
    },
  );
}

describe("Compression.decompress limit", () => {
  const all = [...new Set([...HTTP_COMPRESSIONS.values(), ...GRPC_COMPRESSIONS.values()])];

  it("every compression round trips data within the limit", () => {
    const data = Buffer.from("hello, compressed world ".repeat(100));
    for (const c of all) {
      assert.deepEqual(c.decompress(c.compress(data), data.length), data, c.name);
      assert.deepEqual(c.decompress(c.compress(data), 1 << 20), data, c.name);
    }
  });

  it("a bomb over maxBytes throws resource_exhausted with httpStatus 413 (gzip, deflate, br)", () => {
    assert.deepEqual(all.map((c) => c.name).sort(), ["br", "deflate", "gzip"]);
    for (const c of all) {
      const bomb = c.compress(zeros);
      assert.ok(bomb.length < 64 * 1024, `${c.name} bomb is small: ${bomb.length}`);
      assertTooLarge(c, bomb, 1024);
    }
  });

  it("one byte over the limit is refused; exactly the limit is accepted", () => {
    const data = Buffer.alloc(1000, 7);
    for (const c of all) {
      const packed = c.compress(data);
      assert.equal(c.decompress(packed, 1000).length, 1000, c.name);
      assertTooLarge(c, packed, 999);
    }
  });

  it("corrupt data is invalid_argument (legacy 25), not resource_exhausted", () => {
    for (const c of all) {
      assert.throws(
        () => c.decompress(Buffer.from("definitely not compressed data"), 1 << 20),
        (e: unknown) => e instanceof RpcError && e.code === Code.InvalidArgument && e.legacyStatus === 25,
        c.name,
      );
    }
  });

  it("maxBytes 0 refuses any non-empty output", () => {
    for (const c of all) assertTooLarge(c, c.compress(Buffer.from([1])), 0);
  });
});
