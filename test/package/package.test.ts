import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";

/**
 * The published package, as a user gets it: `npm pack`, installed into fresh ESM and CommonJS
 * apps, a decorated service compiled there with tsc, booted and called.
 */
const ROOT = resolve(".");
const TSC = join(ROOT, "node_modules", ".bin", "tsc");
const work = mkdtempSync(join(tmpdir(), "triple-package-"));
let tarball = "";

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

const TSCONFIG = (module: string) =>
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

function makeApp(kind: "esm" | "cjs"): string {
  const dir = join(work, kind);
  mkdirSync(join(dir, "src"), { recursive: true });
  const type = kind === "esm" ? "module" : "commonjs";
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `app-${kind}`, private: true, type }));
  writeFileSync(join(dir, "tsconfig.json"), TSCONFIG("nodenext"));
  const ext = kind === "esm" ? ".js" : "";
  writeFileSync(join(dir, "src", "contract.ts"), CONTRACT);
  writeFileSync(join(dir, "src", "server.ts"), SERVER(ext || ".js"));
  writeFileSync(join(dir, "src", "client.ts"), CLIENT(ext || ".js"));
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball, "reflect-metadata"], {
    cwd: dir,
    stdio: "pipe",
  });
  return dir;
}

function boot(dir: string): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ["dist/server.js"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolvePort, reject) => {
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
    child.stdout.once("data", (d: Buffer) => resolvePort({ port: Number(d.toString().trim()), stop: () => child.kill("SIGTERM") }));
  });
}

describe("the npm package from a fresh app", { timeout: 240_000 }, () => {
  before(() => {
    execFileSync("npm", ["pack", "--pack-destination", work], { cwd: ROOT, stdio: "pipe" });
    tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz"))!);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("the tarball holds the library only", () => {
    const list = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean);
    assert.ok(list.includes("package/dist/src/index.js"));
    assert.ok(list.includes("package/dist/src/index.d.ts"));
    assert.ok(list.includes("package/dist/esm/index.mjs"));
    assert.ok(list.includes("package/dist/src/cli/main.js"));
    for (const f of list) assert.ok(!/^package\/(dist\/)?(test|bench|samples|src\/.*\.ts$)/.test(f) || f.endsWith(".d.ts"), `unexpected ${f}`);
  });

  for (const kind of ["esm", "cjs"] as const) {
    it(`${kind}: compiles with tsc, boots, and a client that imports only the contract calls it`, async () => {
      const dir = makeApp(kind);
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
    });
  }
});
