/**
 * Defers loading an optional dependency until its first use: a server that never sees the body
 * kinds it parses keeps it out of its live heap (which sets V8's full-GC limit, hence RSS).
 */
export function lazyModule<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}
