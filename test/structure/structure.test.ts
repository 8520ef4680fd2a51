import * as assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { after, before, describe, it } from "node:test";
// TypeScript 7 (the devDependency) is the native compiler: its default export carries only
// `version`. The parser is reached through its API, which runs the bundled tsgo binary.
import { getLeadingCommentRanges, type Node, type SourceFile, SyntaxKind } from "typescript/unstable/ast";
import { API } from "typescript/unstable/sync";

/**
 * Checks over the source tree that keep its structure honest. Paths are relative to the
 * repository root, which is the working directory when the suite runs (`node scripts/run-tests.mjs`).
 */

const ROOT = process.cwd();
const MAX_FUNCTION_LINES = 60;

/** Repository-relative path with forward slashes. */
const rel = (abs: string): string => relative(ROOT, abs).split(sep).join("/");

/** Every file under `dir` (absolute) whose name passes `keep`, sorted. */
function walk(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, keep, out);
    else if (keep(name)) out.push(p);
  }
  return out;
}

const SRC_FILES = walk(join(ROOT, "src"), (n) => n.endsWith(".ts") && !n.endsWith(".d.ts"));

/** 1-based line of a position. */
function lineOf(sf: SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

/** Visits every node of a file, depth first. */
function visit(node: Node, fn: (n: Node) => void): void {
  fn(node);
  node.forEachChild((child) => {
    visit(child, fn);
    return undefined;
  });
}

const FUNCTION_KINDS: ReadonlyMap<SyntaxKind, string> = new Map([
  [SyntaxKind.FunctionDeclaration, "function"],
  [SyntaxKind.MethodDeclaration, "method"],
  [SyntaxKind.Constructor, "constructor"],
  [SyntaxKind.GetAccessor, "getter"],
  [SyntaxKind.SetAccessor, "setter"],
  [SyntaxKind.ArrowFunction, "arrow function"],
  [SyntaxKind.FunctionExpression, "function expression"],
]);

/** A readable name for a function-like node: its own name, or the variable / property it is assigned to. */
function nameOf(sf: SourceFile, node: Node): string {
  const named = (n: Node | undefined): string | undefined => {
    const name = (n as { name?: Node } | undefined)?.name;
    return name ? name.getText(sf) : undefined;
  };
  if (node.kind === SyntaxKind.Constructor) return "constructor";
  return named(node) ?? named(node.parent) ?? "(anonymous)";
}

/** Relative module specifiers of a file's import / export-from declarations (type-only ones too). */
function relativeImports(sf: SourceFile): string[] {
  const out: string[] = [];
  for (const st of sf.statements) {
    let spec: Node | undefined;
    if (st.kind === SyntaxKind.ImportDeclaration || st.kind === SyntaxKind.ExportDeclaration) {
      spec = (st as unknown as { moduleSpecifier?: Node }).moduleSpecifier;
    } else if (st.kind === SyntaxKind.ImportEqualsDeclaration) {
      const ref = (st as unknown as { moduleReference: Node }).moduleReference;
      if (ref.kind === SyntaxKind.ExternalModuleReference) spec = (ref as unknown as { expression: Node }).expression;
    }
    if (spec?.kind !== SyntaxKind.StringLiteral) continue;
    const text = (spec as unknown as { text: string }).text;
    if (text.startsWith("./") || text.startsWith("../")) out.push(text);
  }
  return out;
}

/** The source file a relative specifier names (`.js` → `.ts`), if it is one of ours. */
function resolveImport(from: string, spec: string, known: ReadonlySet<string>): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base.replace(/\.(m|c)?js$/, ".$1ts"), base, `${base}.ts`, join(base, "index.ts")];
  return candidates.find((c) => known.has(c));
}

/** Every elementary cycle reachable by DFS back edges, each reported once (rotated to start at its smallest file). */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles = new Map<string, string[]>();
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const dfs = (n: string): void => {
    state.set(n, "active");
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      const s = state.get(m);
      if (s === "active") {
        const cycle = stack.slice(stack.indexOf(m));
        const min = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(min), ...cycle.slice(0, min)];
        cycles.set(rotated.join(" → "), rotated);
      } else if (s === undefined) dfs(m);
    }
    stack.pop();
    state.set(n, "done");
  };
  for (const n of [...graph.keys()].sort()) if (!state.has(n)) dfs(n);
  return [...cycles.values()];
}

/** Strongly connected components with more than one file (or a file importing itself). */
function cyclicComponents(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  const connect = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) !== idx.get(v)) return;
    const comp: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(comp.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) connect(v);
  return out;
}

/**
 * Names of documents that live outside this repository. Assembled from parts so that this
 * file does not match itself.
 */
const FOREIGN_REFERENCES: readonly string[] = [
  ["decisions", ".md"],
  ["triple-protocol", ".md"],
  ["reference", "-facts"],
  ["DESIGN", ".md"],
  ["STYLE", ".md"],
  ["..", "/shared"],
  ["spec", " §"],
].map((parts) => parts.join(""));

const TEXT_FILE = /\.(ts|mts|cts|js|mjs|cjs|md|proto|json|txt|html|ya?ml|sh)$/;

/** JSDoc blocks directly before a node that carry an `@internal` tag. */
function isInternal(sf: SourceFile, node: Node): boolean {
  const ranges = getLeadingCommentRanges(sf.text, node.pos) ?? [];
  return ranges.some((r) => {
    const c = sf.text.slice(r.pos, r.end);
    return c.startsWith("/**") && /@internal\b/.test(c);
  });
}

/** A class's block in a declaration file: from `declare class Name` to the closing brace at column 0. */
function classBlock(dts: string, className: string): string | undefined {
  const m = new RegExp(`^(?:export )?declare (?:abstract )?class ${className}\\b[^\\n]*\\n`, "m").exec(dts);
  if (!m) return undefined;
  const end = dts.indexOf("\n}", m.index);
  return dts.slice(m.index, end < 0 ? undefined : end + 2);
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** True when a class block declares a member of this name. */
function declaresMember(block: string, member: string): boolean {
  if (member === "constructor") return /^\s+(?:(?:public|protected|private)\s+)?constructor\s*\(/m.test(block);
  const mods = "(?:(?:public|protected|private|static|readonly|abstract|override|accessor|declare|get|set)\\s+)*";
  return new RegExp(`^\\s+${mods}${escapeRe(member)}\\??\\s*[(:<;]`, "m").test(block);
}

describe("source tree structure", () => {
  let api: API;
  const files = new Map<string, SourceFile>();

  before(() => {
    api = new API({ cwd: ROOT });
    const snapshot = api.updateSnapshot({ openProjects: [join(ROOT, "tsconfig.json")] });
    const project = snapshot.getProjects()[0];
    assert.ok(project, "tsconfig.json opens as a project");
    for (const f of SRC_FILES) {
      const sf = project.program.getSourceFile(f);
      assert.ok(sf, `${rel(f)} is part of the tsconfig.json program`);
      files.set(f, sf);
    }
  });

  after(() => api?.close());

  it(`no function, method, constructor, accessor, arrow function or function expression in src/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    assert.ok(files.size > 50, `found ${files.size} source files under src/`);
    const offenders: string[] = [];
    for (const [f, sf] of files) {
      visit(sf, (node) => {
        const kind = FUNCTION_KINDS.get(node.kind);
        if (!kind) return;
        const start = lineOf(sf, node.getStart(sf));
        const length = lineOf(sf, node.end) - start + 1;
        if (length > MAX_FUNCTION_LINES) offenders.push(`${rel(f)}:${start} ${kind} ${nameOf(sf, node)}: ${length} lines`);
      });
    }
    assert.deepEqual(offenders, [], `${offenders.length} functions over ${MAX_FUNCTION_LINES} lines:\n  ${offenders.join("\n  ")}`);
  });

  it("no import cycles among src/**/*.ts (type-only imports count)", () => {
    const known = new Set(files.keys());
    const graph = new Map<string, string[]>();
    for (const [f, sf] of files) {
      const targets = relativeImports(sf)
        .map((spec) => resolveImport(f, spec, known))
        .filter((t): t is string => t !== undefined);
      graph.set(f, [...new Set(targets)]);
    }
    assert.ok(
      [...graph.values()].some((t) => t.length > 0),
      "the import graph has edges",
    );
    const cycles = findCycles(graph).map((c) => [...c, c[0]].map(rel).join(" → "));
    const components = cyclicComponents(graph).map((c) => `{ ${c.map(rel).join(", ")} }`);
    assert.deepEqual(
      cycles,
      [],
      `${cycles.length} import cycles:\n  ${cycles.join("\n  ")}\nin ${components.length} strongly connected groups:\n  ${components.join("\n  ")}`,
    );
  });

  it("no comment or doc refers to files outside this repository", () => {
    const roots = ["src", "docs", "test", "samples", "bench"].map((d) => join(ROOT, d));
    const texts = [...roots.flatMap((d) => walk(d, (n) => TEXT_FILE.test(n))), join(ROOT, "README.md")];
    const offenders: string[] = [];
    for (const f of texts) {
      if (!existsSync(f)) continue;
      const lines = readFileSync(f, "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const needle of FOREIGN_REFERENCES) {
          if (line.includes(needle)) offenders.push(`${rel(f)}:${i + 1} "${needle}": ${line.trim().slice(0, 120)}`);
        }
      });
    }
    assert.deepEqual(offenders, [], `${offenders.length} references to files not in this repository:\n  ${offenders.join("\n  ")}`);
  });

  it("every src/**/*.ts opens with a comment on what the file owns", () => {
    const offenders = [...files.keys()].filter((f) => {
      const lines = readFileSync(f, "utf8").split("\n");
      const first = (lines[0].startsWith("#!") ? lines.slice(1) : lines).find((l) => l.trim() !== "");
      return first === undefined || !/^\s*(\/\/|\/\*)/.test(first);
    });
    assert.deepEqual(
      offenders.map(rel),
      [],
      `${offenders.length} files open without a head comment: two to four lines on what the file owns and what must not change`,
    );
  });

  it("dist/src/runtime/context.d.ts does not expose the @internal members inflightPrev and abort()", (t) => {
    const dts = join(ROOT, "dist", "src", "runtime", "context.d.ts");
    if (!existsSync(dts)) {
      t.skip("no dist/src/runtime/context.d.ts (not built)");
      return;
    }
    const text = readFileSync(dts, "utf8");
    assert.equal(text.includes("inflightPrev"), false, "context.d.ts contains inflightPrev");
    assert.equal(text.includes("abort("), false, "context.d.ts contains abort(");
  });

  it("no @internal-tagged class member appears in the emitted declaration files", (t) => {
    const offenders: string[] = [];
    let checked = 0;
    for (const [f, sf] of files) {
      const dtsPath = join(ROOT, "dist", rel(f).replace(/\.ts$/, ".d.ts"));
      visit(sf, (node) => {
        if (node.kind !== SyntaxKind.ClassDeclaration) return;
        const className = nameOf(sf, node);
        for (const member of (node as unknown as { members: readonly Node[] }).members) {
          if (!isInternal(sf, member) || !existsSync(dtsPath)) continue;
          const name = member.kind === SyntaxKind.Constructor ? "constructor" : nameOf(sf, member);
          checked++;
          const block = classBlock(readFileSync(dtsPath, "utf8"), className);
          if (block && declaresMember(block, name)) {
            offenders.push(`${rel(dtsPath)}: ${className}.${name} (tagged @internal at ${rel(f)}:${lineOf(sf, member.getStart(sf))})`);
          }
        }
      });
    }
    if (checked === 0) {
      t.skip("no declaration files under dist/src, or no @internal members");
      return;
    }
    assert.deepEqual(offenders, [], `${offenders.length} @internal members in declaration files:\n  ${offenders.join("\n  ")}`);
  });
});
