import * as assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";

/**
 * The layering of src/: the layers are written once, in the "Layers" table of
 * docs/architecture.md (top layer first); this test reads them from there. A folder may import
 * only folders of LOWER layers (and itself): no import runs back up, and folders that share a
 * layer do not import each other. The client core (src/client/) never asks which protocol it
 * speaks: every protocol's client half sits behind one interface, registered in one list.
 */

const ROOT = process.cwd();
const SRC = join(ROOT, "src");
const ROOT_FILES = "(root files)";

const rel = (abs: string): string => relative(ROOT, abs).split(sep).join("/");

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The folder of src/ a file belongs to (its first path segment), or the root files. */
function folderOf(abs: string): string {
  const parts = relative(SRC, abs).split(sep);
  return parts.length > 1 ? parts[0] : ROOT_FILES;
}

/**
 * The layers table of docs/architecture.md: rows `| <n> | <folders in backticks> | … |` under
 * the "## Layers" heading; `src/*.ts` names the root files. Higher numbers sit higher.
 */
function readLayers(): Map<string, number> {
  const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
  const start = doc.indexOf("\n## Layers");
  assert.ok(start >= 0, 'docs/architecture.md has a "## Layers" section');
  const section = doc.slice(start + 1).split(/\n## /)[0];
  const rank = new Map<string, number>();
  for (const line of section.split("\n")) {
    const m = /^\|\s*(\d+)\s*\|([^|]*)\|/.exec(line);
    if (!m) continue;
    for (const [, name] of m[2].matchAll(/`([^`]+)`/g)) {
      const folder = name === "src/*.ts" ? ROOT_FILES : name.replace(/^src\//, "").replace(/\/$/, "");
      assert.ok(!rank.has(folder), `${folder} appears twice in the layers table`);
      rank.set(folder, Number(m[1]));
    }
  }
  assert.ok(rank.size >= 10, `the layers table names ${rank.size} folders`);
  return rank;
}

/** Relative specifiers a file imports or re-exports (type-only and dynamic `import("…")` too). */
function importsOf(text: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\bfrom\s*["'](\.\.?\/[^"']+)["']/g,
    /\bimport\s*\(\s*["'](\.\.?\/[^"']+)["']\s*\)/g,
    /\bimport\s+["'](\.\.?\/[^"']+)["']/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) out.push(m[1]);
  return out;
}

function resolveSpec(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  return [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")].find((c) => existsSync(c));
}

const FILES = walk(SRC);

describe("layers", () => {
  const rank = readLayers();

  it("every folder of src/ has a layer in docs/architecture.md", () => {
    const folders = new Set(FILES.map(folderOf));
    const missing = [...folders].filter((f) => !rank.has(f));
    assert.deepEqual(missing, [], `folders without a layer (add them to the table): ${missing.join(", ")}`);
    const stale = [...rank.keys()].filter((f) => !folders.has(f));
    assert.deepEqual(stale, [], `the table names folders src/ does not have: ${stale.join(", ")}`);
  });

  it("no import runs from a folder to one on the same or a higher layer", () => {
    const offenders: string[] = [];
    let edges = 0;
    for (const f of FILES) {
      const from = folderOf(f);
      for (const spec of importsOf(readFileSync(f, "utf8"))) {
        const target = resolveSpec(f, spec);
        if (!target?.startsWith(SRC + sep)) continue;
        const to = folderOf(target);
        if (to === from) continue;
        edges++;
        const a = rank.get(from);
        const b = rank.get(to);
        if (a === undefined || b === undefined || b >= a) offenders.push(`${rel(f)} (${from}, layer ${a}) imports ${rel(target)} (${to}, layer ${b})`);
      }
    }
    assert.ok(edges > 100, `found ${edges} imports between folders`);
    assert.deepEqual(offenders, [], `${offenders.length} imports against the layering:\n  ${offenders.join("\n  ")}`);
  });

  it("the client core never compares protocols: no `protocol ===` / `protocol !==` in src/client/*.ts", () => {
    const offenders: string[] = [];
    // The core: the files directly in src/client/ (cluster/ and loadbalance/ pick providers and
    // see no wire; the registry directory filters Dubbo URLs by their scheme, which is not this).
    const core = FILES.filter((x) => dirname(x) === join(SRC, "client"));
    assert.ok(
      core.some((f) => f.endsWith(`${sep}client-core.ts`)),
      "src/client/client-core.ts is checked",
    );
    for (const f of core) {
      readFileSync(f, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, "");
          if (/protocol\s*[!=]==?/i.test(code) || /[!=]==?\s*[\w.?]*protocol\b/i.test(code) || /switch\s*\([^)]*protocol/i.test(code)) {
            offenders.push(`${rel(f)}:${i + 1}: ${line.trim()}`);
          }
        });
    }
    assert.deepEqual(offenders, [], `protocol comparisons in the client core:\n  ${offenders.join("\n  ")}`);
  });

  it("each protocol folder owns its client half, and the client reaches protocols only through src/client/protocols.ts", () => {
    const protocolFolders = [...new Set(FILES.map(folderOf))].filter((f) => f.startsWith("protocol-"));
    assert.ok(protocolFolders.length >= 4, `protocol folders: ${protocolFolders.join(", ")}`);
    const registry = readFileSync(join(SRC, "client", "protocols.ts"), "utf8");
    for (const folder of protocolFolders) {
      assert.ok(existsSync(join(SRC, folder, "client.ts")), `src/${folder}/client.ts (its client half) exists`);
      assert.ok(registry.includes(`"../${folder}/client.js"`), `src/client/protocols.ts registers ${folder}`);
    }
    const reaching: string[] = [];
    for (const f of FILES.filter((x) => folderOf(x) === "client" && !x.endsWith(`${sep}protocols.ts`))) {
      for (const spec of importsOf(readFileSync(f, "utf8"))) {
        const target = resolveSpec(f, spec);
        if (target !== undefined && folderOf(target).startsWith("protocol-")) reaching.push(`${rel(f)} imports ${rel(target)}`);
      }
    }
    assert.deepEqual(reaching, [], `client files that reach into a protocol folder:\n  ${reaching.join("\n  ")}`);
  });

  it("each protocol folder owns its server half, and the server reaches protocols only through src/server/protocols.ts", () => {
    const protocolFolders = [...new Set(FILES.map(folderOf))].filter((f) => f.startsWith("protocol-"));
    const list = readFileSync(join(SRC, "server", "protocols.ts"), "utf8");
    for (const folder of protocolFolders) {
      const handler = join(SRC, folder, "server-handler.ts");
      assert.ok(existsSync(handler), `src/${folder}/server-handler.ts (its server half) exists`);
      assert.match(readFileSync(handler, "utf8"), /export const \w+: ServerProtocol\b/, `src/${folder}/server-handler.ts exports its ServerProtocol`);
      assert.ok(list.includes(`"../${folder}/server-handler.js"`), `src/server/protocols.ts lists ${folder}`);
    }
    assert.deepEqual(serverCoreOffenders(), [], "the server core names no protocol");
  });

  // A type position (`import("node:stream/web").ReadableStream`) loads nothing, and is let through.
  it("the web entry (src/web.ts) reaches no node: module, eagerly or through a dynamic import", () => {
    const entry = join(SRC, "web.ts");
    const seen = new Set<string>();
    const stack = [entry];
    const offenders: string[] = [];
    while (stack.length > 0) {
      const f = stack.pop() as string;
      if (seen.has(f)) continue;
      seen.add(f);
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(
        /^\s*(?:import|export)(?!\s+type\b)[^;]*?\bfrom\s*["'](node:[^"']+)["']|\bimport\s*\(\s*["'](node:[^"']+)["']\s*\)(?!\.[A-Z])|\brequire\s*\(\s*["'](node:[^"']+)["']\s*\)/gm,
      )) {
        offenders.push(`${rel(f)} imports ${m[1] ?? m[2] ?? m[3]}`);
      }
      for (const m of text.matchAll(
        /^\s*(?:import|export)(?!\s+type\b)[^;]*?\bfrom\s*["'](\.\.?\/[^"']+)["']|\bimport\s*\(\s*["'](\.\.?\/[^"']+)["']\s*\)|^\s*import\s+["'](\.\.?\/[^"']+)["']|\brequire\s*\(\s*["'](\.\.?\/[^"']+)["']\s*\)/gm,
      )) {
        const target = resolveSpec(f, m[1] ?? m[2] ?? m[3] ?? m[4]);
        if (target?.startsWith(SRC + sep)) stack.push(target);
      }
    }
    assert.ok(seen.size > 20, `the web entry reaches ${seen.size} modules`);
    assert.ok(seen.has(join(SRC, "message", "method-codec.ts")), "the protobuf support (a dynamic import) is followed too");
    assert.ok(!seen.has(join(SRC, "message", "message-codec.ts")), "not message-codec.ts, which requires the Java serializations");
    assert.deepEqual(offenders, [], `node: modules reachable from the web entry:\n  ${offenders.join("\n  ")}`);
  });
});

/** The names the built-in server protocols go by (and the REST mapping, which is Triple HTTP's). */
const PROTOCOL_NAMES = ["grpc", "grpc-web", "connect", "triple", "triple-websocket", "websocket", "rest", "mcp"];

/**
 * What in the server core (src/server/) names a protocol: an import of a protocol folder, a
 * protocol's name as a string, a comparison of or switch on a protocol. Exempt: `protocols.ts`
 * (the list), `mcp-*.ts` (MCP's own server half, which runs on the server's invoker), and
 * `openapi*.ts` (the document describes each method's RPC and REST forms; it dispatches nothing).
 */
function serverCoreOffenders(): string[] {
  const exempt = (f: string) => /[\\/](protocols|mcp-[\w-]+|openapi[\w-]*)\.ts$/.test(f);
  const core = FILES.filter((x) => dirname(x) === join(SRC, "server") && !exempt(x));
  assert.ok(
    core.some((f) => f.endsWith(`${sep}server.ts`)),
    "src/server/server.ts is checked",
  );
  const names = new RegExp(`["'\`](${PROTOCOL_NAMES.join("|")})["'\`]`);
  const offenders: string[] = [];
  for (const f of core) {
    const text = readFileSync(f, "utf8");
    for (const spec of importsOf(text)) {
      const target = resolveSpec(f, spec);
      if (target !== undefined && folderOf(target).startsWith("protocol-")) offenders.push(`${rel(f)} imports ${rel(target)}`);
    }
    text.split("\n").forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "").replace(/^\s*\*.*$/, "");
      if (names.test(code) || /protocol\s*[!=]==?/i.test(code) || /switch\s*\([^)]*protocol/i.test(code)) offenders.push(`${rel(f)}:${i + 1}: ${line.trim()}`);
    });
  }
  return offenders;
}
