// Owns `nodeBuiltin`, `requireBuiltin`: Node.js's built-in modules, loaded on first use. Must not
// change: no `node:` import and no `require` here (a browser bundle loads this file too).
import { nodeRequire } from "./metadata.js";

/**
 * A Node.js built-in module (`node:fs`, `node:stream` …), loaded when a Node-only feature first
 * needs it rather than when the module that names it loads: the contract's classes (`Download`,
 * `StreamedFile`) then load in a browser too, where the web client shares them, and browser
 * bundlers see no `node:` import. Undefined where there is no such module (a browser).
 */
export function nodeBuiltin<T>(name: string): T | undefined {
  if (loaded.has(name)) return loaded.get(name) as T | undefined;
  const p = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  // Node 20 before 20.16 has no getBuiltinModule: CommonJS's require, as contract.ts registers it.
  const m = typeof p?.getBuiltinModule === "function" ? p.getBuiltinModule(name) : nodeRequire()?.(name);
  loaded.set(name, m);
  return m as T | undefined;
}

const loaded = new Map<string, unknown>();

/** A built-in that must exist (a Node-only feature was called): throws naming it otherwise. */
export function requireBuiltin<T>(name: string, feature: string): T {
  const m = nodeBuiltin<T>(name);
  if (m === undefined) throw new Error(`${feature} needs Node.js (${name})`);
  return m;
}
