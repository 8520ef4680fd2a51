import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

/**
 * The same service (test/fixtures/compilers) built the four ways users build: tsc 5 with its
 * default standard (TC39) decorators, tsc with experimentalDecorators + emitDecoratorMetadata,
 * esbuild, and tsx (esbuild underneath, legacy decorators without metadata). Each build boots a
 * server, calls it over Triple HTTP and gRPC with the typed client, and prints the exported
 * .proto: all four must agree. A field without a declared type must be refused wherever no
 * metadata says what it is. A declared type that contradicts the signature (mismatch/) must not
 * compile under tsc 5 or tsc 7, standard or legacy decorators, and the diagnostic must say which.
 */

const ROOT = process.cwd();
const BIN = join(ROOT, "node_modules");
/** TypeScript 5 and tsx: the fixture's own packages (`npm ci --prefix test/fixtures/compilers`, done by .ci/run). */
const FIXTURE_BIN = join(ROOT, "test/fixtures/compilers/node_modules");
let dir: string;

function run(cmd: string, args: string[], cwd = dir): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`);
  }
}

const node = (args: string[]) => run(process.execPath, args);

/** How each setup builds (if it does) and runs a fixture module. */
const SETUPS: Record<string, { build?: () => void; run: (module: "main" | "untyped") => string }> = {
  "tsc 5, standard decorators (no flag)": {
    build: () => node([join(FIXTURE_BIN, "typescript/bin/tsc"), "-p", "tsconfig.standard.json"]),
    run: (m) => node([`out-standard/${m}.js`]),
  },
  "tsc, experimentalDecorators + emitDecoratorMetadata": {
    build: () => node([join(BIN, "typescript/bin/tsc"), "-p", "tsconfig.legacy.json"]),
    run: (m) => node([`out-legacy/${m}.js`]),
  },
  "esbuild, standard decorators": {
    build: () => {
      for (const m of ["main", "untyped"]) {
        run(join(BIN, ".bin/esbuild"), [
          `src/${m}.ts`,
          "--bundle",
          "--platform=node",
          "--format=esm",
          "--packages=external",
          "--target=es2022",
          "--tsconfig=tsconfig.standard.json",
          `--outfile=out-esbuild/${m}.js`,
        ]);
      }
    },
    run: (m) => node([`out-esbuild/${m}.js`]),
  },
  "tsx, experimentalDecorators without metadata": {
    run: (m) => node([join(FIXTURE_BIN, "tsx/dist/cli.mjs"), `src/${m}.ts`]),
  },
};

describe("compilers: one service, four builds, one behaviour and one .proto", () => {
  const outputs = new Map<string, any>();
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "triple-compilers-"));
    cpSync(join(ROOT, "test/fixtures/compilers"), dir, { recursive: true, filter: (src) => !src.includes("node_modules") });
    mkdirSync(join(dir, "node_modules/@types"), { recursive: true });
    symlinkSync(ROOT, join(dir, "node_modules/triple-rpc"), "dir");
    symlinkSync(join(BIN, "@types/node"), join(dir, "node_modules/@types/node"), "dir");
    // tsx reads tsconfig.json: legacy decorators, and (like esbuild) never emits metadata.
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "es2022", module: "nodenext", experimentalDecorators: true } }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, setup] of Object.entries(SETUPS)) {
    it(`${name}: builds without errors, serves and calls over Triple and gRPC with types intact`, () => {
      setup.build?.();
      const out = JSON.parse(setup.run("main"));
      outputs.set(name, out);
      for (const protocol of ["triple", "grpc"]) {
        const r = out[protocol];
        assert.equal(r.sinceIsDate, true, `${protocol}: owner.since arrives as a Date`);
        assert.deepEqual(r.pet, { name: "rex", owner: { name: "ann", since: "2020-02-03T00:00:00.000Z" }, tags: ["dog", "good"] });
        assert.equal(r.at, "1970-01-02T00:00:00.000Z");
        assert.equal(r.total, 42, `${protocol}: a client stream of T.int32`);
        assert.deepEqual(r.booked, ["2024-02-29 1+2 -", "2024-03-01 3 late"], `${protocol}: T.localDate, T.array(T.int32) and an optional String bound`);
      }
      assert.match(out.proto, /message Pet \{/);
      assert.match(out.proto, /Owner owner = 3;/);
      assert.match(out.proto, /google\.protobuf\.Timestamp since = 2;/);
      assert.doesNotMatch(out.proto, /google\.protobuf\.Value/);
    });
  }

  it("all four builds export the same .proto and give the same results", () => {
    const all = [...outputs.values()];
    assert.equal(all.length, 4, "every build ran");
    for (const o of all.slice(1)) assert.deepEqual(o, all[0]);
  });

  /** tsc 5 and tsc 7, each with standard and with legacy decorators, on mismatch/service.ts. */
  const CHECKERS: Record<string, { tsc: string; config: string }> = {
    "tsc 5, standard decorators": { tsc: join(FIXTURE_BIN, "typescript/bin/tsc"), config: "tsconfig.mismatch-standard.json" },
    "tsc 5, experimentalDecorators": { tsc: join(FIXTURE_BIN, "typescript/bin/tsc"), config: "tsconfig.mismatch-legacy.json" },
    "tsc 7, standard decorators": { tsc: join(BIN, "typescript/bin/tsc"), config: "tsconfig.mismatch-standard.json" },
    "tsc 7, experimentalDecorators": { tsc: join(BIN, "typescript/bin/tsc"), config: "tsconfig.mismatch-legacy.json" },
  };
  /** Each declaration of mismatch/service.ts that contradicts its signature: its line, and what the diagnostic must say. */
  const MISMATCHES: [line: number, said: RegExp][] = [
    [6, /"@Field: the declared type does not fit the property"; declared: number; property: string; \}/],
    [7, /"@Field: the declared type does not fit the property"; declared: string\[\]; property: number\[\] \| undefined; \}/],
    [12, /"@Method\(\{ params \}\): params\[0\] does not fit the method's parameter #1"; declared: string; parameter: number; \}/],
    [17, /"@Method\(\{ params \}\): params\[0\] \(day\) does not fit the method's parameter #1"; declared: string; parameter: Date; \}/],
    [22, /"@Method\(\{ params \}\): params\[1\] \(b\) does not fit the method's parameter #2"; declared: number \| undefined; parameter: number; \}/],
    [27, /"@Method\(\{ params \}\): params\.length is 1 but the method takes 2 parameters: list every parameter, in order"; \}/],
    [
      32,
      /"@Method\(\{ params \}\): params\[0\] \(xs\) does not fit the method's parameter #1"; declared: AsyncIterable<number>; parameter: AsyncIterable<string>; \}/,
    ],
  ];

  for (const [name, { tsc, config }] of Object.entries(CHECKERS)) {
    it(`${name}: a declared type that contradicts the signature does not compile, and the diagnostic names the mismatch`, () => {
      let said = "";
      try {
        node([tsc, "-p", config, "--pretty", "false"]);
      } catch (e) {
        said = (e as Error).message;
      }
      assert.ok(said, "the mismatching fixture compiled");
      const errors = said.split("\n").filter((l) => /^mismatch\/service\.ts\(\d+,\d+\): error/.test(l));
      assert.equal(errors.length, MISMATCHES.length, `one error per mismatch:\n${errors.join("\n")}`);
      for (const [line, expected] of MISMATCHES) {
        const error = errors.find((l) => l.startsWith(`mismatch/service.ts(${line},`));
        assert.ok(error, `no error at line ${line}:\n${errors.join("\n")}`);
        assert.match(error, /error TS127[01]: Decorator function return type/);
        assert.match(error, expected);
      }
    });
  }

  for (const [name, setup] of Object.entries(SETUPS)) {
    it(`${name}: a @Field() without a type is ${name.includes("emitDecoratorMetadata") ? "typed by metadata" : "a registration error naming the class, field and fix"}`, () => {
      const said = setup.run("untyped").trim();
      if (name.includes("emitDecoratorMetadata")) assert.equal(said, "registered");
      else {
        assert.match(said, /^Item\.sku has no type, because the compiler emitted no design:type metadata/);
        assert.match(said, /@Field\(String\)/);
      }
    });
  }
});
