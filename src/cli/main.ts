#!/usr/bin/env node
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import "reflect-metadata";
import { toProtoFiles } from "../schema/proto-text.js";
import { SERVICE_KEY } from "../service/decorators.js";

const USAGE = `usage: triple-rpc proto <module.js> [--out file.proto | --out-dir dir]

Prints the .proto of every decorated service class the module exports (the schema derived from
the classes, as the server's reflection serves it). --out writes it to a file instead; services
in several packages need --out-dir, which writes one file per package.`;

type ServiceClass = abstract new (...args: never[]) => unknown;

/** The @Service classes among a module's exports (and its default export's members). */
function serviceClasses(mod: Record<string, unknown>): ServiceClass[] {
  const seen = new Set<unknown>();
  const out: ServiceClass[] = [];
  const visit = (v: unknown) => {
    if (typeof v === "function" && !seen.has(v) && Reflect.hasMetadata(SERVICE_KEY, v)) {
      seen.add(v);
      out.push(v as ServiceClass);
    }
  };
  for (const v of Object.values(mod)) visit(v);
  const d = mod.default;
  if (d && typeof d === "object") for (const v of Object.values(d)) visit(v);
  return out;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const v = args[i + 1];
  if (!v || v.startsWith("--")) throw new Error(`${name} needs a value`);
  args.splice(i, 2);
  return v;
}

async function proto(args: string[]): Promise<void> {
  const out = option(args, "--out");
  const outDir = option(args, "--out-dir");
  if (args.length !== 1) throw new Error(USAGE);
  const mod = (await import(pathToFileURL(resolve(args[0])).href)) as Record<string, unknown>;
  const classes = serviceClasses(mod);
  if (classes.length === 0) throw new Error(`${args[0]} exports no @Service class`);
  const files = toProtoFiles(classes);
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
    throw new Error(`the services span ${files.length} packages (${files.map((f) => f.package).join(", ")}): use --out-dir`);
  }
  if (out) writeFileSync(out, files[0].text);
  else process.stdout.write(files[0].text);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === "proto") return proto(args);
  if (command === "--help" || command === "-h" || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  throw new Error(`unknown command "${command}"\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((e: Error) => {
  process.stderr.write(`triple-rpc: ${e.message}\n`);
  process.exitCode = 1;
});
