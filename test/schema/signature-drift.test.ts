import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type ClientContentType,
  closeClient,
  createClient,
  describeService,
  Method,
  Param,
  Service,
  type TripleServer,
  createServer,
} from "../../src/index.js";
import { diffSchemaLocks, schemaLock } from "../../src/schema/lock.js";

/**
 * Signature drift: a client built from v1 of a service calls a server running v2. Whatever edit
 * v2 made, `triple-rpc schema --check` (diffSchemaLocks against v1's lock) may pass it only if
 * every protocol a client uses gives the call the same meaning; an edit that changes the meaning
 * on any protocol must be refused, naming the method, the parameter and the fix.
 */

@Service("drift.Mover")
class V1 {
  @Method() async move(@Param("from") from: string, @Param("to") to: string): Promise<string> {
    return `from=${from} to=${to}`;
  }
}

interface Row {
  edit: string;
  v2: new () => unknown;
  /** What --check must say (every breaking change must match one of these); none: it passes. */
  refused?: RegExp[];
}

const ROWS: Row[] = [
  { edit: "nothing changed", v2: V1 },
  {
    edit: "reordered, tags pinned as --check advised",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(@Param({ name: "to", tag: 2 }) to: string, @Param({ name: "from", tag: 1 }) from: string): Promise<string> {
          return `from=${from} to=${to}`;
        }
      }
      return S;
    })(),
    refused: [/drift\.Mover\/move: parameter #1 "from" moved to #2 .*keep "from" at #1/, /drift\.Mover\/move: parameter #2 "to" moved to #1/],
  },
  {
    edit: "reordered, no tags",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(@Param("to") to: string, @Param("from") from: string): Promise<string> {
          return `from=${from} to=${to}`;
        }
      }
      return S;
    })(),
    refused: [/parameter #1 "from" moved to #2/, /parameter #2 "to" moved to #1/, /MoveRequest\.(from|to): field number changed/],
  },
  {
    edit: "a parameter renamed, its tag kept",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(@Param("from") from: string, @Param({ name: "dest", tag: 2 }) dest: string): Promise<string> {
          return `from=${from} to=${dest}`;
        }
      }
      return S;
    })(),
    refused: [/drift\.Mover\/move: parameter #2 "to" is gone \(now "dest" there\)/, /MoveRequest\.to: field number 2 reused by "dest"/],
  },
  {
    edit: "an optional parameter added at the end",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(@Param("from") from: string, @Param("to") to: string, @Param({ name: "note", optional: true }) note?: string): Promise<string> {
          return `from=${from} to=${to}${note ? ` (${note})` : ""}`;
        }
      }
      return S;
    })(),
  },
  {
    edit: "an optional parameter inserted in the middle, tags pinned",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(
          @Param({ name: "from", tag: 1 }) from: string,
          @Param({ name: "via", tag: 3, optional: true }) via: string | undefined,
          @Param({ name: "to", tag: 2 }) to: string,
        ): Promise<string> {
          return `from=${from} to=${to}${via ? ` via ${via}` : ""}`;
        }
      }
      return S;
    })(),
    refused: [/drift\.Mover\/move: parameter #2 "to" moved to #3 \(now "via" there\)/],
  },
  {
    edit: "the last parameter removed",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(@Param("from") from: string): Promise<string> {
          return `from=${from} to=`;
        }
      }
      return S;
    })(),
    refused: [/drift\.Mover\/move: parameter #2 "to" is gone \(now nothing there\)/, /MoveRequest\.to: field 2 removed/],
  },
  {
    edit: "a parameter retyped",
    v2: (() => {
      @Service("drift.Mover")
      class S {
        @Method() async move(@Param("from") from: string, @Param("to") to: number): Promise<string> {
          return `from=${from} to=${to}`;
        }
      }
      return S;
    })(),
    refused: [/MoveRequest\.to: field 2 retyped from string \(required\) to double \(required\)/],
  },
];

/** The ways a client calls: every protocol and body format our client offers for unary calls. */
const WAYS: { protocol: "triple" | "grpc" | "connect" | "grpc-web"; contentType?: ClientContentType }[] = [
  { protocol: "triple" },
  { protocol: "triple", contentType: "proto" },
  { protocol: "grpc" },
  { protocol: "grpc", contentType: "grpc+json" },
  { protocol: "connect" },
  { protocol: "connect", contentType: "proto" },
  { protocol: "grpc-web" },
];

const V1_LOCK = schemaLock([describeService(V1)]);

describe("signature drift: old clients against new servers, every protocol", () => {
  let server: TripleServer;
  const clients: object[] = [];
  before(async () => {
    // Each edit is a version of the same service on one server; old clients ask for it by version.
    server = createServer({ services: ROWS.map((r, i) => ({ implementation: new r.v2(), version: `v${i}` })) });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await server?.close();
  });

  ROWS.forEach((row, i) => {
    it(`${row.edit}: --check ${row.refused ? "refuses it" : "passes it"}, and a pass keeps every call's meaning`, async () => {
      const changes = diffSchemaLocks(V1_LOCK, schemaLock([describeService(row.v2)]));
      const breaking = changes.filter((c) => c.breaking).map((c) => `${c.where}: ${c.message}`);
      const results: string[] = [];
      for (const way of WAYS) {
        const client = createClient(V1, { providers: [server.url], ...way, version: `v${i}`, retries: 0, timeoutMs: 5000 });
        clients.push(client);
        const r = await client.move("alice", "bob").then(
          (v) => v,
          (e: Error) => `error: ${e.message}`,
        );
        results.push(`${way.protocol} ${way.contentType ?? "(default)"}: ${r}`);
      }
      const sameMeaning = results.every((r) => r.endsWith(": from=alice to=bob"));
      if (!row.refused) {
        assert.deepEqual(breaking, [], `--check refused a harmless edit:\n${breaking.join("\n")}`);
        assert.ok(sameMeaning, `--check passed an edit that changed a call:\n${results.join("\n")}`);
        return;
      }
      assert.ok(breaking.length > 0, `--check passed it, and the old client's calls gave:\n${results.join("\n")}`);
      for (const re of row.refused)
        assert.ok(
          breaking.some((l) => re.test(l)),
          `no breaking change matches ${re}:\n${breaking.join("\n")}`,
        );
      // Refused for a reason: at least one protocol's call changed its meaning.
      assert.ok(!sameMeaning, `refused, yet every protocol kept the meaning:\n${results.join("\n")}`);
    });
  });

  it("a lock written before positions were recorded: positions are read from its field numbers", () => {
    const old = structuredClone(V1_LOCK) as { services: Record<string, { methods: Record<string, { params?: string[] }> }> };
    delete old.services["drift.Mover"].methods.move.params;
    const changes = diffSchemaLocks(old as typeof V1_LOCK, schemaLock([describeService(ROWS[1].v2)]));
    const lines = changes.filter((c) => c.breaking).map((c) => c.message);
    assert.ok(
      lines.some((l) => /parameter #1 "from" moved to #2 .*rewrite the lock with --write/.test(l)),
      lines.join("\n"),
    );
  });
});
