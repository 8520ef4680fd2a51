import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * A user's app built on the package, for the package tests: a decorated contract, a server and a
 * client compiled with tsc, booted and called. Paths are absolute; ROOT is the repository.
 */
export const ROOT = resolve(".");
/** TypeScript 7, the devDependency (named by path: another compiler may own node_modules/.bin/tsc). */
export const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const NPM_QUIET = ["--prefer-offline", "--no-audit", "--no-fund"];

/**
 * Copies the working tree's files (tracked and untracked, not ignored; no dist/, no
 * node_modules) to `dir`: what a fresh clone holds. With `deps`, node_modules is this
 * repository's (what `npm ci` would leave, minus the build its `prepare` makes).
 */
export function copyCheckout(dir: string, deps: boolean): void {
  const files = execFileSync("git", ["ls-files", "-z", "-co", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && !/(^|\/)node_modules(\/|$)|^dist\//.test(f) && existsSync(join(ROOT, f)));
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), readFileSync(join(ROOT, f)));
  }
  if (deps) symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
}

const CONTRACT = `import { Method, Param, Service, unimplemented } from "triple-rpc/contract";

@Service("app.Hello")
export class HelloContract {
  @Method({ returns: Date })
  when(@Param("year") year: number): Promise<Date> {
    return unimplemented();
  }

  @Method()
  hello(@Param("name") name: string): Promise<string> {
    return unimplemented();
  }
}
`;

const SERVER = (ext: string) => `import { createServer } from "triple-rpc";
import { HelloContract } from "./contract${ext}";

class Hello extends HelloContract {
  override async when(year: number): Promise<Date> {
    return new Date(Date.UTC(year, 0, 1));
  }
  override async hello(name: string): Promise<string> {
    return "hello " + name;
  }
}

const server = createServer({ services: [new Hello()] });
server.listen({ port: 0 }).then((a) => console.log(String(a.port)));
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
`;

const CLIENT = (ext: string) => `import { closeClient, createClient } from "triple-rpc/client";
import { HelloContract } from "./contract${ext}";

async function main(): Promise<void> {
  const client = createClient(HelloContract, { providers: "127.0.0.1:" + process.argv[2] });
  const when = await client.when(2030);
  const text = await client.hello("pack");
  console.log(JSON.stringify({ isDate: when instanceof Date, iso: when.toISOString(), text }));
  closeClient(client);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
`;

export const TSCONFIG = (module: string) =>
  JSON.stringify({
    compilerOptions: {
      target: "es2022",
      module,
      moduleResolution: module,
      strict: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      outDir: "dist",
      rootDir: "src",
    },
    include: ["src"],
  });

/**
 * A fresh app of `kind` under `<work>/<name>` with the package installed from `source` (a tarball,
 * a directory or a git URL; npm runs the package's `prepare` for the last two, as it would for a user).
 */
export function makeApp(work: string, kind: "esm" | "cjs", source: string, name: string = kind): string {
  const dir = join(work, name);
  mkdirSync(join(dir, "src"), { recursive: true });
  const type = kind === "esm" ? "module" : "commonjs";
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `app-${name}`, private: true, type }));
  writeFileSync(join(dir, "tsconfig.json"), TSCONFIG("nodenext"));
  const ext = kind === "esm" ? ".js" : "";
  writeFileSync(join(dir, "src", "contract.ts"), CONTRACT);
  writeFileSync(join(dir, "src", "server.ts"), SERVER(ext || ".js"));
  writeFileSync(join(dir, "src", "client.ts"), CLIENT(ext || ".js"));
  const scripts = source.endsWith(".tgz") ? ["--ignore-scripts"] : [];
  // As the README has it: @types/node is the app's (a TypeScript app on Node has it), not the package's.
  execFileSync("npm", ["install", ...NPM_QUIET, ...scripts, source, "reflect-metadata", "@types/node@20"], { cwd: dir, stdio: "pipe" });
  return dir;
}

/** Compiles the app with tsc, boots its server, calls it with its client and curl's body, and exports its .proto with the CLI. */
export async function runApp(dir: string): Promise<void> {
  execFileSync(TSC, ["-p", "."], { cwd: dir, stdio: "pipe" });
  const server = await boot(dir);
  try {
    const out = execFileSync(process.execPath, ["dist/client.js", String(server.port)], { cwd: dir, encoding: "utf8" });
    assert.deepEqual(JSON.parse(out), { isDate: true, iso: "2030-01-01T00:00:00.000Z", text: "hello pack" });
    const r = await fetch(`http://127.0.0.1:${server.port}/app.Hello/hello`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '["curl"]',
    });
    assert.equal(await r.json(), "hello curl");
  } finally {
    server.stop();
  }
  const cli = execFileSync(join(dir, "node_modules", ".bin", "triple-rpc"), ["proto", "dist/contract.js"], { cwd: dir, encoding: "utf8" });
  assert.match(cli, /service Hello \{/);
}

/** A TypeScript 5 compiler (the last line with `moduleResolution: node10`): this repository's, or one installed for the test. */
export function typescript5(work: string): string {
  const local = join(ROOT, "node_modules", "typescript5");
  const version = (dir: string) => (existsSync(join(dir, "package.json")) ? JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version : "");
  if (version(local).startsWith("5.")) return join(local, "bin", "tsc");
  const dir = join(work, "ts5");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "ts5", private: true }));
  execFileSync("npm", ["install", ...NPM_QUIET, "typescript@5"], { cwd: dir, stdio: "pipe" });
  return join(dir, "node_modules", "typescript", "bin", "tsc");
}

function boot(dir: string): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ["dist/server.js"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolvePort, reject) => {
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout.once("data", (d: Buffer) => resolvePort({ port: Number(d.toString().trim()), stop: () => child.kill("SIGTERM") }));
  });
}
