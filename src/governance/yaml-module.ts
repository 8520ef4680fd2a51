// Owns `yamlModule`. The `yaml` package (~200 KB), loaded when the first rule arrives: a client or
// server that never reads a governance rule never loads it, and a client-only bundle stays within
// its budget. Must not change: Dubbo 3.3's rule semantics (the oracle tests compare with Dubbo
// Java).
import type * as Yaml from "yaml";
import { runtimePackage } from "../codec/runtime-package.js";

/**
 * The `yaml` package (~200 KB), loaded when the first rule arrives: a client or server that never
 * reads a governance rule never loads it, and a client-only bundle stays within its budget. Its
 * name is not a literal, so bundlers (esbuild, webpack, Rollup) leave it out, as they leave out
 * node-zookeeper-client: an app that bundles itself and reads governance rules keeps `yaml`
 * installed beside the bundle.
 */
const YAML_PACKAGE = ["ya", "ml"].join("");

export const yamlModule = runtimePackage<typeof Yaml>(YAML_PACKAGE, "governance rules");
