import type * as Yaml from "yaml";
import { lazyModule } from "../codec/lazy-module.js";

/**
 * The `yaml` package (~200 KB), loaded when the first rule arrives: a client or server that never
 * reads a governance rule never loads it, and a client-only bundle stays within its budget. Its
 * name is not a literal, so bundlers (esbuild, webpack, Rollup) leave it out, as they leave out
 * node-zookeeper-client: an app that bundles itself and reads governance rules keeps `yaml`
 * installed beside the bundle.
 */
const YAML_PACKAGE = ["ya", "ml"].join("");

export const yamlModule = lazyModule(() => {
  try {
    return require(YAML_PACKAGE) as typeof Yaml;
  } catch (e) {
    const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    throw new Error(`governance rules need the ${YAML_PACKAGE} package (${why}); it is loaded at run time, not bundled: install it where the app (or its bundle) runs`, { cause: e });
  }
});
