/// <reference types="node" preserve="true" />
/**
 * `triple-rpc/registry`: what a custom registry (etcd, Nacos, Kubernetes…) is written against —
 * the `Registry` interface, Dubbo's URL and its helpers, application-level metadata — kept off the
 * client entry, which carries only what an application passes as `registry`.
 */
export type { Registry, ProvidersListener, InstanceDiscovery } from "./registry/registry.js";
export { ZookeeperRegistry, type ZookeeperRegistryOptions } from "./registry/zookeeper.js";
export type { RegistryLevel } from "./registry/options.js";
export { calRevision, type MetadataInfo, type ServiceInfo } from "./registry/instance.js";
export type { ConfigCenter } from "./governance/config-center.js";
export { type DubboUrl, type ServiceKey, toFullString, parseUrl, encodeComponent, decodeComponent, matchesService } from "./registry/url.js";
