// Owns `resolveRegistry`. The registry a server or client uses, and whether it owns it (one built
// from an address is closed with its owner; an object is shared and left open). Must not change:
// the ZooKeeper paths, URL encodings and metadata Apache Dubbo reads and writes.
import type { Logger } from "../runtime/logger.js";
import { isRegistry, type Registry } from "./registry.js";
import { ZookeeperRegistry } from "./zookeeper.js";

/** A registry given by address (`zookeeper://host:port?…`) or as an object. */
export type RegistrySpec = string | Registry;

/**
 * The registry a server or client uses, and whether it owns it (one built from an address is
 * closed with its owner; an object is shared and left open). `who` names the caller in errors;
 * one built here logs through `logger` (the server's or client's).
 */
export function resolveRegistry(spec: RegistrySpec, who: string, logger: Logger): { registry: Registry; owned: boolean } {
  if (isRegistry(spec)) return { registry: spec, owned: false };
  if (typeof spec !== "string") {
    throw new TypeError(`${who}: registry must be an address ("zookeeper://127.0.0.1:2181") or a Registry object`);
  }
  if (/^zookeeper:\/\//i.test(spec)) return { registry: new ZookeeperRegistry(spec, { logger }), owned: true };
  throw new TypeError(`${who}: unsupported registry "${spec}": only zookeeper://host:port is built in; pass a Registry object for others`);
}
