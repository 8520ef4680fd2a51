/**
 * The `registry` option group shared by createServer and createClient: an address or Registry
 * object alone, or `{ address, … }` with the side's settings; and the one vocabulary of the
 * discovery levels (`interface`, `application`, `both`) on both sides. Values are Dubbo's levels.
 */
import { checkGroup, oneOf, shown } from "../runtime/options-check.js";
import { isRegistry, type Registry } from "./registry.js";
import type { RegistrySpec } from "./create.js";

/**
 * Where a server registers and a client discovers: `interface` (Dubbo's interface level,
 * `/dubbo/<interface>/providers`), `application` (Dubbo 3's application level: `/services/<app>`,
 * the interface → application mapping and each revision's metadata), or `both`.
 */
export type RegistryLevel = "interface" | "application" | "both";

const REGISTRY_LEVELS: readonly RegistryLevel[] = ["interface", "application", "both"];

/** The level words of 0.1 (server `registerMode`, client `discovery`), refused with the new word. */
const OLD_LEVELS: Readonly<Record<string, RegistryLevel>> = { instance: "application", all: "both", auto: "both" };

/** `registry.level`: undefined, or one of {@link REGISTRY_LEVELS}; a word of 0.1 is refused naming its new one. */
export function checkLevel(who: string, v: unknown): RegistryLevel | undefined {
  if (v === undefined || REGISTRY_LEVELS.includes(v as RegistryLevel)) return v as RegistryLevel | undefined;
  if (typeof v === "string" && Object.hasOwn(OLD_LEVELS, v)) {
    throw new TypeError(`${who}: registry.level "${v}" was renamed "${OLD_LEVELS[v]}" in 0.x; see CHANGELOG.md`);
  }
  throw new TypeError(`${who}: registry.level must be ${oneOf(REGISTRY_LEVELS).must}, got ${shown(v)}`);
}

/** The names of 0.1 someone may carry into the group. */
const OLD_KEYS: Readonly<Record<string, string>> = {
  registerMode: "registry.level",
  discovery: "registry.level",
  registryHost: "registry.host",
  registryWeight: "registry.weight",
  registryTag: "registry.tag",
  registryWarmupMs: "registry.warmupMs",
};

/** A `registry` option: an address, a Registry object, or a group with `address`. */
export type RegistryOption<G extends { address: RegistrySpec }> = string | Registry | G;

/**
 * The `registry` group of `v`: `{ address }` for an address or a Registry object, else the
 * group checked against `known` (its unknown keys refused, naming the nearest valid ones).
 */
export function registryGroup<G extends { address: RegistrySpec }>(who: string, v: RegistryOption<G>, known: readonly string[]): G {
  if (typeof v === "string" || isRegistry(v)) return { address: v } as G;
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new TypeError(`${who}: registry must be an address ("zookeeper://127.0.0.1:2181"), a Registry object or { address, … }, got ${shown(v)}`);
  }
  const g = checkGroup(who, "registry", v as G, ["address", ...known], OLD_KEYS) as G;
  if (g.address === undefined) {
    throw new TypeError(`${who}: registry.address is missing: give an address ("zookeeper://127.0.0.1:2181") or a Registry object`);
  }
  return g;
}
