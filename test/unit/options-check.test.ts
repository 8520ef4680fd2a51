import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callOptions, createClient, createHandler, createServer, createTestClient, type ServerOptions } from "../../src/index.js";
import { bool, bytes, check, checkGroup, count, ms, oneOf, refuseRenamed, text } from "../../src/runtime/options-check.js";
import { EchoService } from "../registry/services.js";

/** A TypeError whose message is exactly `message`. */
const exactly = (message: string) => (e: unknown) => {
  assert.ok(e instanceof TypeError, String(e));
  assert.equal(e.message, message);
  return true;
};

describe("the one option checker: each rule, the full path in the message", () => {
  it("ms: a whole number of milliseconds a timer keeps; undefined passes", () => {
    assert.equal(check("t", "a.bMs", undefined, ms()), undefined);
    assert.equal(check("t", "a.bMs", 0, ms()), 0);
    for (const [v, shown] of [
      [-1, "-1"],
      [1.5, "1.5"],
      [Number.NaN, "NaN"],
      [2 ** 31, "2147483648"],
      ["5", '"5"'],
    ] as const) {
      assert.throws(
        () => check("t", "a.bMs", v, ms("0 means none")),
        exactly(`t: a.bMs must be a whole number of milliseconds from 0 to 2147483647 (0 means none), got ${shown}`),
      );
    }
  });

  it("bytes: a non-negative integer or Infinity", () => {
    assert.equal(check("createServer", "limits.maxBodyBytes", Number.POSITIVE_INFINITY, bytes), Number.POSITIVE_INFINITY);
    assert.throws(
      () => check("createServer", "limits.maxBodyBytes", -1, bytes),
      exactly("createServer: limits.maxBodyBytes must be a non-negative integer number of bytes (Infinity for no limit), got -1"),
    );
    assert.throws(() => check("createServer", "limits.maxBodyBytes", 0.5, bytes), /got 0\.5$/);
  });

  it("count, bool, text, oneOf: what each refuses", () => {
    assert.throws(() => check("c", "retries", 1.5, count()), exactly("c: retries must be a whole number >= 0, got 1.5"));
    assert.throws(() => check("c", "n", 0, count(1, 5)), exactly("c: n must be a whole number from 1 to 5, got 0"));
    assert.throws(() => check("c", "flag", "yes", bool), exactly('c: flag must be true or false, got "yes"'));
    assert.throws(() => check("c", "name", " ", text), exactly('c: name must be a non-empty string, got " "'));
    assert.throws(() => check("c", "x.kind", "c", oneOf(["a", "b"])), exactly('c: x.kind must be "a" or "b", got "c"'));
    assert.throws(() => check("c", "x", null, bool), exactly("c: x must be true or false, got null"));
    assert.throws(() => check("c", "x", {}, bool), exactly("c: x must be true or false, got an object"));
  });

  it("groups: not an object, an unknown key (with the nearest names, else the list), a renamed key", () => {
    assert.throws(() => checkGroup("w", "limits", 5 as unknown as object, ["maxA"]), exactly("w: limits must be an object of options, got 5"));
    assert.throws(
      () => checkGroup("w", "g", { maxBodyByte: 1 }, ["maxBodyBytes", "maxParts"]),
      exactly("w: g.maxBodyByte is not an option (did you mean maxBodyBytes?)"),
    );
    assert.throws(
      () => checkGroup("w", "g", { zzz: 1 }, ["maxBodyBytes", "maxParts"]),
      exactly("w: g.zzz is not an option; the options of g are maxBodyBytes, maxParts"),
    );
    assert.throws(() => checkGroup("w", "g", { old: 1 }, ["now"], { old: "g.now" }), exactly("w: `g.old` was renamed `g.now` in 0.x; see CHANGELOG.md"));
    assert.throws(() => refuseRenamed("w", { old: 1 }, { old: "now" }), exactly("w: `old` was renamed `now` in 0.x; see CHANGELOG.md"));
    assert.doesNotThrow(() => refuseRenamed("w", { old: undefined }, { old: "now" }));
  });
});

describe("createServer: the regrouped options", () => {
  const zk = "zookeeper://127.0.0.1:1";
  it("every option renamed in 0.x is refused, naming the new one", () => {
    const renamed: [string, unknown, string][] = [
      ["maxHeaderBytes", 1024, "limits.maxHeaderBytes"],
      ["uploadDir", "/tmp", "uploads.dir"],
      ["application", "a", "registry.application"],
      ["registryHost", "h", "registry.host"],
      ["registryWeight", 5, "registry.weight"],
      ["registryWarmupMs", 5, "registry.warmupMs"],
      ["registerMode", "all", "registry.level"],
      ["metadataStorage", "local", "registry.metadataStorage"],
      ["registryTag", "gray", "registry.tag"],
      ["configCenter", false, "registry.configCenter"],
      ["unregisterDelayMs", 5, "registry.unregisterDelayMs"],
    ];
    for (const [old, v, now] of renamed) {
      assert.throws(
        () => createServer({ [old]: v } as ServerOptions),
        exactly(`createServer: \`${old}\` was renamed \`${now}\` in 0.x; see CHANGELOG.md`),
        old,
      );
    }
    for (const [old, now] of [
      ["uploadMemoryBytes", "uploads.memoryBytes"],
      ["maxUploadFileBytes", "uploads.maxFileBytes"],
      ["maxUploadBytes", "uploads.maxBytes"],
      ["maxUploadDiskBytes", "uploads.maxDiskBytes"],
      ["maxUploadDiskBytesPerPeer", "uploads.maxDiskBytesPerPeer"],
    ]) {
      assert.throws(
        () => createServer({ limits: { [old]: 1 } } as ServerOptions),
        exactly(`createServer: \`limits.${old}\` was renamed \`${now}\` in 0.x; see CHANGELOG.md`),
        old,
      );
    }
  });

  it("limits, uploads and registry: bad values and unknown keys name the full path", () => {
    assert.throws(
      () => createServer({ limits: { maxHeaderBytes: 0 } }),
      exactly("createServer: limits.maxHeaderBytes must be a whole number of bytes from 1 to 2147483647, got 0"),
    );
    assert.throws(
      () => createServer({ uploads: { memoryBytes: -1 } }),
      /^TypeError: createServer: uploads\.memoryBytes must be a non-negative integer number of bytes/,
    );
    assert.throws(
      () => createServer({ uploads: { maxFileByte: 1 } as never }),
      exactly("createServer: uploads.maxFileByte is not an option (did you mean maxFileBytes?)"),
    );
    assert.throws(
      () => createServer({ registry: { address: zk, levle: "both" } as never }),
      exactly("createServer: registry.levle is not an option (did you mean level?)"),
    );
    assert.throws(() => createServer({ registry: { application: "a" } as never }), /createServer: registry\.address is missing/);
    assert.throws(() => createServer({ registry: { address: zk, weight: -1 } }), /createServer: registry\.weight must be a number from 0 to 10000/);
    assert.throws(
      () => createServer({ registry: { address: zk, unregisterDelayMs: 1.5 } }),
      /createServer: registry\.unregisterDelayMs must be a whole number of milliseconds/,
    );
    assert.throws(
      () => createServer({ registry: { address: zk, metadataStorage: "disk" as never } }),
      exactly('createServer: registry.metadataStorage must be "local" or "remote", got "disk"'),
    );
    assert.throws(() => createServer({ maxConnections: 0 }), /createServer: maxConnections must be a whole number >= 1/);
    assert.throws(() => createServer({ maskUnexpectedErrors: 1 as never }), exactly("createServer: maskUnexpectedErrors must be true or false, got 1"));
  });

  it("registry.level: interface, application or both; the words of 0.1 are refused with the new word", () => {
    assert.throws(
      () => createServer({ registry: { address: zk, level: "instance" as never } }),
      exactly('createServer: registry.level "instance" was renamed "application" in 0.x; see CHANGELOG.md'),
    );
    assert.throws(
      () => createServer({ registry: { address: zk, level: "all" as never } }),
      exactly('createServer: registry.level "all" was renamed "both" in 0.x; see CHANGELOG.md'),
    );
    assert.throws(
      () => createServer({ registry: { address: zk, level: "apps" as never } }),
      exactly('createServer: registry.level must be "interface", "application" or "both", got "apps"'),
    );
  });

  it("a mounted handler refuses limits.maxHeaderBytes and the registry group: the port's owner has them", () => {
    assert.throws(
      () => createHandler({ limits: { maxHeaderBytes: 4096 } }),
      /createHandler: limits\.maxHeaderBytes is a setting of the server that owns the port/,
    );
    assert.throws(() => createHandler({ registry: { address: zk } } as never), /createHandler: registry needs a server that owns its port/);
  });
});

describe("createClient: the regrouped options and timeoutMs", () => {
  it("every option renamed in 0.x is refused, naming the new one", () => {
    for (const [old, v, now] of [
      ["timeout", 5, "timeoutMs"],
      ["application", "a", "registry.application"],
      ["discovery", "auto", "registry.level"],
      ["providedBy", "a", "registry.providedBy"],
      ["configCenter", false, "registry.configCenter"],
      ["emptyProtection", false, "registry.emptyProtection"],
      ["registerConsumer", false, "registry.registerConsumer"],
    ] as const) {
      assert.throws(
        () => createClient(EchoService, { providers: ["127.0.0.1:1"], [old]: v }),
        exactly(`createClient: \`${old}\` was renamed \`${now}\` in 0.x; see CHANGELOG.md`),
        old,
      );
    }
    assert.throws(
      () => createClient(EchoService, { providers: ["127.0.0.1:1"], methods: { whoami: { timeout: 5 } as never } }),
      exactly("createClient: `timeout` was renamed `methods.whoami.timeoutMs` in 0.x; see CHANGELOG.md"),
    );
  });

  it("registry group and durations: bad values name the full path; the level words of 0.1 are refused", () => {
    const zk = "zookeeper://127.0.0.1:1";
    assert.throws(
      () => createClient(EchoService, { registry: { address: zk, level: "auto" as never } }),
      exactly('createClient: registry.level "auto" was renamed "both" in 0.x; see CHANGELOG.md'),
    );
    assert.throws(
      () => createClient(EchoService, { registry: { address: zk, emptyProtection: "no" as never } }),
      exactly('createClient: registry.emptyProtection must be true or false, got "no"'),
    );
    assert.throws(
      () => createClient(EchoService, { registry: { address: zk, discovery: "both" } as never }),
      exactly("createClient: `registry.discovery` was renamed `registry.level` in 0.x; see CHANGELOG.md"),
    );
    assert.throws(
      () => createClient(EchoService, { registry: { address: zk, zzz: 1 } as never }),
      exactly(
        "createClient: registry.zzz is not an option; the options of registry are address, application, level, providedBy, configCenter, emptyProtection, registerConsumer",
      ),
    );
    assert.throws(
      () => createClient(EchoService, { providers: ["127.0.0.1:1"], timeoutMs: -5 }),
      exactly("createClient: timeoutMs must be a whole number of milliseconds from 0 to 2147483647 (0 means none), got -5"),
    );
    assert.throws(
      () => createClient(EchoService, { providers: ["127.0.0.1:1"], retries: 1.5 }),
      exactly("createClient: retries must be a whole number >= 0, got 1.5"),
    );
    assert.throws(
      () => createClient(EchoService, { providers: ["127.0.0.1:1"], methods: { whoami: { timeoutMs: -1 } } }),
      /createClient: methods\.whoami\.timeoutMs must be a whole number of milliseconds/,
    );
    assert.throws(
      () => createClient(EchoService, { providers: ["127.0.0.1:1"], outlierDetection: { baseEjectionMs: 0.5 } }),
      exactly("createClient: outlierDetection.baseEjectionMs must be a whole number of milliseconds from 1 to 2147483647, got 0.5"),
    );
    assert.throws(
      () => createClient(EchoService, { providers: ["127.0.0.1:1"], outlierDetection: { maxEjectionPercnt: 10 } as never }),
      exactly("createClient: outlierDetection.maxEjectionPercnt is not an option (did you mean maxEjectionPercent?)"),
    );
  });

  it("a call given { timeout } fails naming timeoutMs; timeoutMs on the call, the method and the client bound the call", async () => {
    const slow = createTestClient(EchoService, { services: [new EchoService("t")], client: { methods: { whoami: { timeoutMs: 60_000 } } } });
    await assert.rejects(
      slow.whoami(callOptions({ timeout: 5 } as never)),
      exactly("call options: `timeout` was renamed `timeoutMs` in 0.x; see CHANGELOG.md"),
    );
    assert.equal(await slow.whoami(callOptions({ timeoutMs: 5000 })), "t");
  });
});

describe("unknown top-level options are refused (a typo is not silently ignored)", () => {
  const providers = ["127.0.0.1:1"];
  it("createServer, createHandler and createTestClient: the nearest names, or the key alone", () => {
    assert.throws(
      () => createServer({ shutdownTimeout: 5 } as never),
      exactly("createServer: shutdownTimeout is not an option (did you mean shutdownTimeoutMs?)"),
    );
    assert.throws(() => createServer({ maxConnection: 5 } as never), exactly("createServer: maxConnection is not an option (did you mean maxConnections?)"));
    assert.throws(() => createServer({ zzzzzzzz: 1 } as never), exactly("createServer: zzzzzzzz is not an option"));
    assert.throws(() => createHandler({ intercepters: [] } as never), exactly("createServer: intercepters is not an option (did you mean interceptors?)"));
    assert.throws(
      () => createTestClient(EchoService, { services: [], limit: {} } as never),
      exactly("createServer: limit is not an option (did you mean limits?)"),
    );
    // undefined values are what spreading partial options gives: not refused.
    assert.doesNotThrow(() => createServer({ shutdownTimeout: undefined } as never));
  });
  it("createClient: the nearest names; a renamed key still names its new place", () => {
    assert.throws(
      () => createClient(EchoService, { providers, timeoutMS: 5 } as never),
      exactly("createClient: timeoutMS is not an option (did you mean timeoutMs?)"),
    );
    assert.throws(
      () => createClient(EchoService, { providers, retires: 1 } as never),
      exactly("createClient: retires is not an option (did you mean retries?)"),
    );
    assert.throws(
      () => createClient(EchoService, { providers, timeout: 5 } as never),
      exactly("createClient: `timeout` was renamed `timeoutMs` in 0.x; see CHANGELOG.md"),
    );
  });
});
