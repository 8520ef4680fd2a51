/**
 * The decorators' own metadata store: what `@Service`, `@Method`, `@Param` and `@Field` record on
 * a class or prototype, without reflect-metadata (a browser bundle of a contract need not carry
 * it). One store per process, on a global symbol, so the CommonJS and ESM builds share it; reads
 * follow the prototype chain as reflect-metadata's `getMetadata` does. Keep both properties.
 * Also what Node.js hands over when it is there: reflect-metadata's design types, CommonJS's
 * `require` (`nodeRequire`), so that modules a browser bundle loads name neither.
 */

type Store = WeakMap<object, Map<symbol, unknown>>;

const g = globalThis as Record<symbol, Store | undefined>;
const STORE_KEY = Symbol.for("triple-rpc:metadata");
const store: Store = (g[STORE_KEY] ??= new WeakMap());

/** Records `value` under `key` on `target` itself. */
export function defineMeta(key: symbol, value: unknown, target: object): void {
  let own = store.get(target);
  if (!own) store.set(target, (own = new Map()));
  own.set(key, value);
}

/** True when `target` itself (not a prototype of it) holds `key`. */
export function hasOwnMeta(key: symbol, target: object): boolean {
  return store.get(target)?.has(key) === true;
}

/** The value under `key` on `target` or the nearest object of its prototype chain that holds one. */
export function getMeta<T>(key: symbol, target: object): T | undefined {
  for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t)) {
    const own = store.get(t);
    if (own?.has(key)) return own.get(key) as T;
  }
  return undefined;
}

/**
 * TypeScript's emitted decorator metadata (`design:paramtypes`, `design:type`), when the compiler
 * emitted it and a reflect-metadata polyfill recorded it (the Node entries load one); undefined
 * otherwise (esbuild, standard decorators, a browser bundle without the polyfill).
 */
export function designMeta(key: "design:paramtypes" | "design:type", target: object, property: string): unknown {
  const r = Reflect as { getMetadata?: (k: string, t: object, p: string) => unknown };
  return typeof r.getMetadata === "function" ? r.getMetadata(key, target, property) : undefined;
}

/**
 * The type a class stands for as a parameter or result (`"upload"` on `StreamedFile`, `"download"`
 * on `Download`): type-desc.ts reads the mark, so describing a class does not import those classes
 * (a browser bundle of a contract leaves them out).
 */
export const TYPE_KIND: unique symbol = Symbol.for("triple-rpc:type-kind");

type Require = (id: string) => unknown;

let nodeRequireFn: Require | undefined;

/**
 * Node.js's contract entry (contract.ts) hands over its CommonJS `require` when it loads (ids
 * resolve from src/): describe.ts loads .proto files with it, node-builtin.ts built-ins before
 * Node 20.16. They name no `require` themselves, so a bundler adds no require shim to a page.
 */
export function useNodeRequire(r: Require): void {
  nodeRequireFn ??= r;
}

/** CommonJS's `require` (ids relative to src/), or undefined where there is none (a browser). */
export function nodeRequire(): Require | undefined {
  return nodeRequireFn;
}
