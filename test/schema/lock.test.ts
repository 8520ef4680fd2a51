import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { describeService, Field, Method, Param, ServerStream, Service } from "../../src/index.js";
import { diffSchemaLocks, type SchemaLock, schemaLock } from "../../src/schema/lock.js";

/**
 * The schema lock: a table of edits to a code-first service, each with the verdict `--check`
 * must give (breaking or compatible) and the words the report must use.
 */

class Item {
  @Field() sku!: string;
  @Field() qty!: number;
  @Field({ optional: true }) note?: string;
}

/** The methods every variant keeps; each variant declares its own `add`. */
class Common {
  @Method() async put(@Param("item") _item: Item): Promise<boolean> {
    return true;
  }
  @Method() async ping(@Param("n") n: number): Promise<number> {
    return n;
  }
}

@Service("lock.Shop")
class Base extends Common {
  @Method() async add(@Param("a") a: number, @Param("b") b: string): Promise<number> {
    return a + b.length;
  }
}

const lockOf = (c: new () => unknown): SchemaLock => schemaLock([describeService(c)]);
const BASE = lockOf(Base);

interface Row {
  edit: string;
  make: () => new () => unknown;
  breaking: boolean;
  /** Every change listed must match one of these, and each of these must match a change. */
  expect: RegExp[];
}

const TABLE: Row[] = [
  {
    edit: "nothing changed",
    make: () => Base,
    breaking: false,
    expect: [],
  },
  {
    edit: "a new method",
    breaking: false,
    expect: [/lock\.Shop\/stock: method added/],
    make: () => {
      @Service("lock.Shop")
      class S extends Base {
        @Method() async stock(@Param("sku") _sku: string): Promise<number> {
          return 0;
        }
      }
      return S;
    },
  },
  {
    edit: "a new optional parameter at the end",
    breaking: false,
    expect: [/lock\.AddRequest\.c: field 3 added \(optional string\)/],
    make: () => {
      @Service("lock.Shop")
      class S extends Common {
        @Method() async add(@Param("a") a: number, @Param("b") b: string, @Param({ name: "c", optional: true }) _c?: string): Promise<number> {
          return a + b.length;
        }
      }
      return S;
    },
  },
  {
    edit: "a new required parameter",
    breaking: true,
    expect: [/lock\.AddRequest\.c: required field 3 added: deployed clients do not send it/],
    make: () => {
      @Service("lock.Shop")
      class S extends Common {
        @Method() async add(@Param("a") a: number, @Param("b") b: string, @Param("c") _c: string): Promise<number> {
          return a + b.length;
        }
      }
      return S;
    },
  },
  {
    edit: "parameters reordered without tag",
    breaking: true,
    expect: [
      /lock\.AddRequest\.a: field number changed from 1 to 2 .*pin it with tag: 1/,
      /lock\.AddRequest\.b: field number changed from 2 to 1 .*pin it with tag: 2/,
      /lock\.Shop\/add: parameter #1 "a" moved to #2 \(now "b" there\): callers that send the arguments as a JSON array by position/,
      /lock\.Shop\/add: parameter #2 "b" moved to #1 \(now "a" there\)/,
    ],
    make: () => {
      @Service("lock.Shop")
      class S extends Common {
        @Method() async add(@Param("b") b: string, @Param("a") a: number): Promise<number> {
          return a + b.length;
        }
      }
      return S;
    },
  },
  {
    edit: "parameters reordered with their tags pinned (protobuf callers unaffected, positional JSON callers swapped)",
    breaking: true,
    expect: [
      /lock\.Shop\/add: parameter #1 "a" moved to #2 \(now "b" there\): .*keep "a" at #1 and add new parameters after the last/,
      /lock\.Shop\/add: parameter #2 "b" moved to #1 \(now "a" there\)/,
    ],
    make: () => {
      @Service("lock.Shop")
      class S extends Common {
        @Method() async add(@Param({ name: "b", tag: 2 }) b: string, @Param({ name: "a", tag: 1 }) a: number): Promise<number> {
          return a + b.length;
        }
      }
      return S;
    },
  },
  {
    edit: "a parameter retyped",
    breaking: true,
    expect: [/lock\.AddRequest\.a: field 1 retyped from double \(required\) to string \(required\)/],
    make: () => {
      @Service("lock.Shop")
      class S extends Common {
        @Method() async add(@Param("a") a: string, @Param("b") b: string): Promise<number> {
          return a.length + b.length;
        }
      }
      return S;
    },
  },
  {
    edit: "a method removed",
    breaking: true,
    expect: [/lock\.Shop\/ping: method removed or renamed/],
    make: () => {
      @Service("lock.Shop")
      class S {
        @Method() async add(@Param("a") a: number, @Param("b") b: string): Promise<number> {
          return a + b.length;
        }
        @Method() async put(@Param("item") _item: Item): Promise<boolean> {
          return true;
        }
      }
      return S;
    },
  },
  {
    edit: "a method renamed",
    breaking: true,
    expect: [/lock\.Shop\/ping: method removed or renamed/, /lock\.Shop\/pong: method added/],
    make: () => {
      @Service("lock.Shop")
      class S {
        @Method() async add(@Param("a") a: number, @Param("b") b: string): Promise<number> {
          return a + b.length;
        }
        @Method() async put(@Param("item") _item: Item): Promise<boolean> {
          return true;
        }
        @Method() async pong(@Param("n") n: number): Promise<number> {
          return n;
        }
      }
      return S;
    },
  },
  {
    edit: "unary became server streaming",
    breaking: true,
    expect: [/lock\.Shop\/ping: streaming changed from unary to server streaming/],
    make: () => {
      @Service("lock.Shop")
      class S {
        @Method() async add(@Param("a") a: number, @Param("b") b: string): Promise<number> {
          return a + b.length;
        }
        @Method() async put(@Param("item") _item: Item): Promise<boolean> {
          return true;
        }
        @ServerStream() async *ping(@Param("n") n: number): AsyncIterable<number> {
          yield n;
        }
      }
      return S;
    },
  },
  {
    edit: "a class field inserted before others without tag",
    breaking: true,
    expect: [
      /lock\.Item\.qty: field number changed from 2 to 3/,
      /lock\.Item\.note: field number changed from 3 to 4/,
      /lock\.Item\.qty: field number 2 reused by "price"/,
    ],
    make: () => {
      class Item2 {
        @Field() sku!: string;
        @Field() price!: number;
        @Field() qty!: number;
        @Field({ optional: true }) note?: string;
      }
      Object.defineProperty(Item2, "name", { value: "Item" });
      @Service("lock.Shop")
      class S extends Base {
        @Method() override async put(@Param("item") _item: Item2): Promise<boolean> {
          return true;
        }
      }
      return S;
    },
  },
  {
    edit: "an optional class field added at the end",
    breaking: false,
    expect: [/lock\.Item\.color: field 4 added \(optional string\)/],
    make: () => {
      class Item2 {
        @Field() sku!: string;
        @Field() qty!: number;
        @Field({ optional: true }) note?: string;
        @Field({ optional: true }) color?: string;
      }
      Object.defineProperty(Item2, "name", { value: "Item" });
      @Service("lock.Shop")
      class S extends Base {
        @Method() override async put(@Param("item") _item: Item2): Promise<boolean> {
          return true;
        }
      }
      return S;
    },
  },
  {
    edit: "a class field removed and its number reused",
    breaking: true,
    expect: [/lock\.Item\.note: field number 3 reused by "memo"/],
    make: () => {
      class Item2 {
        @Field() sku!: string;
        @Field() qty!: number;
        @Field({ optional: true }) memo?: string;
      }
      Object.defineProperty(Item2, "name", { value: "Item" });
      @Service("lock.Shop")
      class S extends Base {
        @Method() override async put(@Param("item") _item: Item2): Promise<boolean> {
          return true;
        }
      }
      return S;
    },
  },
  {
    edit: "an optional field made required",
    breaking: true,
    expect: [/lock\.Item\.note: field 3 (retyped|became required)/],
    make: () => {
      class Item2 {
        @Field() sku!: string;
        @Field() qty!: number;
        @Field() note!: string;
      }
      Object.defineProperty(Item2, "name", { value: "Item" });
      @Service("lock.Shop")
      class S extends Base {
        @Method() override async put(@Param("item") _item: Item2): Promise<boolean> {
          return true;
        }
      }
      return S;
    },
  },
];

describe("schema lock: edits × verdict", () => {
  for (const row of TABLE) {
    it(`${row.edit} → ${row.breaking ? "breaking" : "compatible"}`, () => {
      const changes = diffSchemaLocks(BASE, lockOf(row.make()));
      const lines = changes.map((c) => `${c.where}: ${c.message}`);
      assert.equal(
        changes.some((c) => c.breaking),
        row.breaking,
        lines.join("\n"),
      );
      for (const re of row.expect)
        assert.ok(
          lines.some((l) => re.test(l)),
          `no change matches ${re}:\n${lines.join("\n")}`,
        );
      for (const l of lines)
        assert.ok(
          row.expect.some((re) => re.test(l)),
          `unexpected change: ${l}`,
        );
    });
  }

  it("the lock records services, methods, messages, numbers, types and requiredness", () => {
    assert.deepEqual(BASE.services["lock.Shop"].methods.add, {
      input: "lock.AddRequest",
      output: "lock.AddResponse",
      clientStreaming: false,
      serverStreaming: false,
      params: ["a", "b"],
    });
    assert.deepEqual(BASE.messages["lock.AddRequest"].fields, {
      a: { number: 1, type: "double", repeated: false, map: false, optional: false, required: true },
      b: { number: 2, type: "string", repeated: false, map: false, optional: false, required: true },
    });
    assert.equal(BASE.messages["lock.PutRequest"].fields.item.type, ".lock.Item");
    assert.equal(BASE.messages["lock.Item"].fields.note.required, false);
  });
});

describe("triple-rpc schema --write / --check (the CI step)", () => {
  const CLI = resolve("dist/src/cli/main.js");
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, "schema", ...args], { encoding: "utf8", timeout: 30_000 });

  it("--write saves the lock; --check passes on the same code, fails listing breaking changes, allows compatible ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "lock-"));
    const lock = join(dir, "triple-rpc.lock.json");
    try {
      const w = run(resolve("dist/test/schema/lock-v1.js"), "--write", lock);
      assert.equal(w.status, 0, w.stderr);
      assert.equal(JSON.parse(readFileSync(lock, "utf8")).lockVersion, 1);
      const same = run(resolve("dist/test/schema/lock-v1.js"), "--check", lock);
      assert.equal(same.status, 0, same.stderr);
      assert.match(same.stdout, /the schema matches/);
      const broken = run(resolve("dist/test/schema/lock-v2.js"), "--check", lock);
      assert.equal(broken.status, 1);
      assert.match(broken.stderr, /5 breaking changes against .*triple-rpc\.lock\.json:/);
      assert.match(broken.stderr, /✗ lockcli\.Calc\/add: parameter #1 "x" moved to #2/);
      assert.match(broken.stderr, /✗ lockcli\.Calc\/sub: method removed or renamed/);
      assert.match(broken.stderr, /✗ lockcli\.AddRequest\.x: field number changed from 1 to 2/);
      const compatible = run(resolve("dist/test/schema/lock-v3.js"), "--check", lock);
      assert.equal(compatible.status, 0, compatible.stderr);
      assert.match(compatible.stdout, /\+ lockcli\.Calc\/mul: method added/);
      const missing = run(resolve("dist/test/schema/lock-v1.js"), "--check", join(dir, "nope.json"));
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /no schema lock at .*nope\.json: create it with triple-rpc schema .* --write/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
