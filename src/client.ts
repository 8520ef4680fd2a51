/// <reference types="node" preserve="true" />
/**
 * `triple-rpc/client`: the client alone — typed clients from service classes or contracts, the
 * cluster policies and balancers, errors. It loads no server code.
 */
import "reflect-metadata";

export * from "./contract.js";
export {
  createClient,
  closeClient,
  clientProviders,
  explainRoute,
  type Client,
  type ClientMethod,
  type ClientResult,
  type ProtoClient,
  type ProtoServiceRef,
} from "./client/create-client.js";
export { callOptions, type CallOptions } from "./runtime/call-options.js";
export type { ClientOptions, ClientContentType, ClientRegistryOptions, ClientWebSocketOptions, TokenSource } from "./client/options.js";
export { Provider, type ProviderInit } from "./transport/client/provider.js";
export { StaticDirectory, type Directory } from "./client/cluster/directory.js";
export type { ClusterPolicy, ClusterPolicyName, ClusterContext, Invocation, Attempt } from "./client/cluster/cluster.js";
export { FailoverError } from "./client/cluster/failover-error.js";
export type { OutlierDetectionOptions, OutlierSettings } from "./client/cluster/outlier.js";
export type { LoadBalancer, LoadBalancerName } from "./client/loadbalance/load-balancer.js";
export type { ClientCall, ClientInterceptor, ClientNext } from "./client/interceptor.js";
export { ConsoleLogger, type Logger } from "./runtime/logger.js";
export type { Clock } from "./transport/clock.js";
export type { TelemetryOptions } from "./observability/telemetry.js";
export { TRI_PROTOCOL_VERSION } from "./protocol/headers.js";
export type { Registry, ProvidersListener, InstanceDiscovery } from "./registry/registry.js";
export { ZookeeperRegistry, type ZookeeperRegistryOptions } from "./registry/zookeeper.js";
export type { RegistryLevel } from "./registry/options.js";
export type { ConfigCenter } from "./governance/config-center.js";
export type { RouteExplanation, RouteStep } from "./governance/router-chain.js";
// Dubbo's URL helpers and revision (for custom registries) are on `triple-rpc/registry`.
