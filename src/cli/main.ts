#!/usr/bin/env node
// The `triple-rpc` command line: `proto`, `openapi` and `schema` (lock, diff) over the services a
// module defines. Must not change: the commands, their output and exit codes, which scripts depend
// on.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import "reflect-metadata";
import { diffSchemaLocks, formatSchemaChanges, parseSchemaLock, schemaLock } from "../schema/lock.js";
import { toProtoFiles } from "../schema/proto-text.js";
import { boundProtoFiles } from "./bound-protos.js";
import { describeService } from "../service/describe.js";
import { toOpenApi } from "../server/openapi.js";
import { definedServices, type RawService, SERVICE_KEY } from "../service/decorators.js";
import { getMeta } from "../service/metadata.js";

const USAGE = `usage: triple-rpc proto <module.js> [--out file.proto | --out-dir dir]
       triple-rpc openapi <module.js> [--out file.json] [--title T] [--api-version V] [--server URL]
       triple-rpc schema <module.js> [--write [lock.json] | --check [lock.json]]

Prints the .proto of every decorated service class the module exports (the schema derived from
the classes, as the server's reflection serves it); a module that exports none but defines some
(a server's main module) gives the ones it defined. A service bound to a .proto of its own
(@Service(name, { proto })) gives that file as it is (and the files it imports), said on stderr.
--out writes it to a file instead; services in several packages (or several files) need
--out-dir, which writes one file per package and each bound service's own files.

openapi prints the OpenAPI 3.1 document (JSON) of the same services: RPC paths and REST
mappings, as createServer({ openapi: true }) serves it at /openapi.json. --out writes it to a
file; --title and --api-version set info.title and info.version; --server adds a servers entry.

The module is imported, so its top-level code runs, with TRIPLE_RPC_CLI=1 in the environment: a
module that starts a server can skip that when the variable is set. The command exits once the
.proto is written, whatever the module started. A module that takes longer than 15 s to load
(a top-level await that never settles) is an error; --import-timeout-ms <ms> sets that limit
(any command).

schema prints the schema lock of the module's services (services, methods, messages, field
numbers and types, as JSON); --write saves it (default triple-rpc.lock.json); --check compares
the classes with the saved lock and exits 1 listing the breaking changes (a field number reused
or retyped, a required field added, a method removed or renamed, a parameter moved to another
position, renamed or removed: positional JSON callers bind by position, even with tags pinned),
0 when there are none (compatible changes, such as a new optional field or a new method,
are listed and allowed).`;

const DEFAULT_LOCK = "triple-rpc.lock.json";

/** How long the module may take to load (top-level await included): `--import-timeout-ms`, default 15 s. */
let importTimeoutMs = 15_000;

type ServiceClass = abstract new (...args: never[]) => unknown;

/** The @Service classes among a module's exports (and its default export's members). */
function serviceClasses(mod: Record<string, unknown>): ServiceClass[] {
  const seen = new Set<unknown>();
  const out: ServiceClass[] = [];
  const visit = (v: unknown) => {
    if (typeof v === "function" && !seen.has(v) && getMeta(SERVICE_KEY, v) !== undefined) {
      seen.add(v);
      out.push(v as ServiceClass);
    }
  };
  for (const v of Object.values(mod)) visit(v);
  const d = mod.default;
  if (d && typeof d === "object") for (const v of Object.values(d)) visit(v);
  return out;
}

/** Imports the module, bounded in time: a module whose top-level await never settles is an error. */
async function load(path: string): Promise<Record<string, unknown>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${path} did not finish loading within ${importTimeoutMs / 1000} s (a top-level await that never settles? --import-timeout-ms sets the limit)`,
          ),
        ),
      importTimeoutMs,
    );
  });
  try {
    return (await Promise.race([import(pathToFileURL(resolve(path)).href), timeout])) as Record<string, unknown>;
  } finally {
    clearTimeout(timer);
  }
}

/** The classes to describe: the module's exported services, else every service it defined. */
async function classesOf(path: string): Promise<ServiceClass[]> {
  const before = new Set(definedServices());
  const exported = serviceClasses(await load(path));
  if (exported.length > 0) return exported;
  // The server's own services (health, reflection) are defined when its module loads: not the user's.
  const builtIn = (c: object) => /^grpc\.(health|reflection)\./.test((getMeta<RawService>(SERVICE_KEY, c) as RawService).name ?? "");
  const defined = [...definedServices()].filter((c) => !before.has(c) && !builtIn(c)) as ServiceClass[];
  if (defined.length === 0) {
    throw new Error(`${path} exports no @Service class and defines none: point the command at the compiled module that defines your service classes`);
  }
  process.stderr.write(`${path} exports no @Service class; using the ${defined.length} it defined: ${defined.map((c) => c.name).join(", ")}\n`);
  return defined;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (!v || v.startsWith("--")) throw new Error(`${name} needs a value`);
  args.splice(i, 2);
  return v;
}

/**
 * The files `proto` prints or writes: the schema derived from the IDL-less services, and the own
 * .proto files (with their imports) of services bound to one, said on stderr. Never none.
 */
function protoFilesOf(classes: ServiceClass[], writing: boolean): { name: string; package: string; text: string }[] {
  const derived = toProtoFiles(classes);
  const { files: own, bound, inMemory } = boundProtoFiles(classes);
  for (const b of bound) process.stderr.write(`${b} is bound to its own .proto: ${writing ? "copied" : "printed"} as it is, not derived\n`);
  if (inMemory.length) {
    process.stderr.write(`${inMemory.join(", ")}: bound to a .proto given as a protobufjs object, not a file: nothing to print for them\n`);
  }
  const files = [...derived, ...own];
  const names = files.map((f) => f.name);
  const clash = names.find((n, i) => names.indexOf(n) !== i);
  if (clash) throw new Error(`two files would be named ${clash} (a derived one and a service's own .proto): export the services from separate modules`);
  if (files.length === 0)
    throw new Error(`${inMemory.join(", ")}: every service is bound to a protobufjs object, not a .proto file: there is no file to print`);
  return files;
}

async function proto(args: string[]): Promise<void> {
  const out = option(args, "--out");
  const outDir = option(args, "--out-dir");
  if (args.length !== 1) throw new Error(USAGE);
  process.env.TRIPLE_RPC_CLI = "1";
  const files = protoFilesOf(await classesOf(args[0]), outDir !== undefined || out !== undefined);
  if (outDir) {
    for (const f of files) {
      const path = join(outDir, f.name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, f.text);
      process.stderr.write(`wrote ${path}\n`);
    }
    return;
  }
  if (files.length > 1) {
    throw new Error(`the services need ${files.length} files (${files.map((f) => f.name).join(", ")}): use --out-dir`);
  }
  if (out) writeFileSync(out, files[0].text);
  else await new Promise<void>((done) => process.stdout.write(files[0].text, () => done()));
}

async function openapi(args: string[]): Promise<void> {
  const out = option(args, "--out");
  const title = option(args, "--title");
  const version = option(args, "--api-version");
  const server = option(args, "--server");
  if (args.length !== 1) throw new Error(USAGE);
  process.env.TRIPLE_RPC_CLI = "1";
  const doc = toOpenApi(await classesOf(args[0]), { title, version, servers: server ? [{ url: server }] : undefined });
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (out) writeFileSync(out, text);
  else await new Promise<void>((done) => process.stdout.write(text, () => done()));
}

/** An option with an optional value: undefined when absent, the value or `fallback` when present. */
function flag(args: string[], name: string, fallback: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  // A value is the next word unless it is an option or the module (the one .js/.mjs/.cjs argument).
  if (v !== undefined && !v.startsWith("--") && !/\.[cm]?js$/.test(v)) {
    args.splice(i, 2);
    return v;
  }
  args.splice(i, 1);
  return fallback;
}

async function schema(args: string[]): Promise<number> {
  const write = flag(args, "--write", DEFAULT_LOCK);
  const check = flag(args, "--check", DEFAULT_LOCK);
  if (args.length !== 1 || (write && check)) throw new Error(USAGE);
  process.env.TRIPLE_RPC_CLI = "1";
  const lock = schemaLock((await classesOf(args[0])).map((c) => describeService(c)));
  const json = `${JSON.stringify(lock, null, 2)}\n`;
  if (write) {
    writeFileSync(write, json);
    process.stderr.write(`wrote ${write}\n`);
    return 0;
  }
  if (!check) {
    await new Promise<void>((done) => process.stdout.write(json, () => done()));
    return 0;
  }
  if (!existsSync(check)) throw new Error(`no schema lock at ${check}: create it with triple-rpc schema ${args[0]} --write ${check}, and commit it`);
  const changes = diffSchemaLocks(parseSchemaLock(readFileSync(check, "utf8"), check), lock);
  const report = formatSchemaChanges(changes, check);
  const broken = changes.some((c) => c.breaking);
  await new Promise<void>((done) => (broken ? process.stderr : process.stdout).write(`${report}\n`, () => done()));
  return broken ? 1 : 0;
}

/** Takes `--import-timeout-ms <ms>` out of the arguments (any command): a whole number of milliseconds above 0. */
function importTimeout(args: string[]): void {
  const v = option(args, "--import-timeout-ms");
  if (v === undefined) return;
  const ms = Number(v);
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`--import-timeout-ms takes a whole number of milliseconds above 0, got ${JSON.stringify(v)}`);
  importTimeoutMs = ms;
}

async function main(argv: string[]): Promise<number | void> {
  const [command, ...args] = argv;
  importTimeout(args);
  if (command === "proto") return proto(args);
  if (command === "openapi") return openapi(args);
  if (command === "schema") return schema(args);
  if (command === "--help" || command === "-h" || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  throw new Error(`unknown command "${command}"\n\n${USAGE}`);
}

// Exit explicitly: the imported module may have started servers, timers or connections.
main(process.argv.slice(2)).then(
  (code) => process.exit(code ?? 0),
  (e: Error) => {
    process.stderr.write(`triple-rpc: ${e.message}\n`, () => process.exit(1));
  },
);
