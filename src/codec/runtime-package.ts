// Owns `runtimePackage`. A package loaded at run time by a name bundlers do not follow (the name is
// a variable): kept out of bundles, where a CommonJS package inside an ESM bundle fails with
// "Dynamic require of … is not supported". Must not change: limits are checked before memory is
// spent; bad input is a 4xx naming the problem.
import { createRequire } from "node:module";
import { join } from "node:path";
import { lazyModule } from "./lazy-module.js";

/**
 * A package loaded at run time by a name bundlers do not follow (the name is a variable): kept
 * out of bundles, where a CommonJS package inside an ESM bundle fails with "Dynamic require of
 * … is not supported". Loaded with this module's `require`, else (an ESM build or bundle has
 * none) from beside the app's main script; the error names the package and what needs it.
 */
export function runtimePackage<T>(name: string, usedFor: string): () => T {
  return lazyModule(() => {
    try {
      return require(name) as T;
    } catch (first) {
      try {
        return createRequire(process.argv[1] ?? join(process.cwd(), "main.js"))(name) as T;
      } catch {
        const why = (first instanceof Error ? first.message : String(first)).split("\n")[0];
        throw new Error(
          `${usedFor}: cannot load ${name} (${why}). It is loaded at run time, not bundled: install it where the app (or its bundle) runs (npm i ${name})`,
          { cause: first },
        );
      }
    }
  });
}
