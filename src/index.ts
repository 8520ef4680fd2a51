/// <reference types="node" preserve="true" />
/**
 * triple-rpc: decorated TypeScript classes as RPC services over the Triple protocol
 * (HTTP/1.1 and HTTP/2 unary, gRPC streaming) on one port.
 */
import "reflect-metadata";

export { Code, codeFromName, codeName } from "./protocol/code.js";
export { RpcError, type RpcErrorOptions, type ErrorDetail, type MetadataInit } from "./protocol/rpc-error.js";
export { codeFromHttpStatus, httpStatusOf, legacyStatusOf } from "./protocol/status-table.js";
export { TRI_PROTOCOL_VERSION } from "./protocol/headers.js";
export {
  Service,
  Method,
  Param,
  Ctx,
  Field,
  ServerStream,
  ClientStream,
  BidiStream,
  type ServiceOptions,
  type MethodOptions,
  type ParamOptions,
} from "./service/decorators.js";
export { T, UploadedFile, type TypeDesc, type TypeSpec, type FieldDesc, type FieldOptions } from "./service/type-desc.js";
export { unimplemented } from "./contract.js";
export type {
  AuthRequirement,
  MethodKind,
  MethodDescriptor,
  ParamDescriptor,
  ServiceDescriptor,
} from "./service/descriptors.js";
export { describeService } from "./service/describe.js";
export { loadProto } from "./service/proto.js";
export { toProto, toProtoFiles } from "./schema/proto-text.js";
export { CallContext, createContextKey, type ContextKey, type Identity } from "./server/context.js";
export { Metadata, OutgoingMetadata } from "./server/metadata.js";
export type { Call, Interceptor, Next } from "./server/interceptor.js";
export { DEFAULT_LIMITS, type Limits } from "./server/limits.js";
export {
  createServer,
  TripleServer,
  type ServerOptions,
  type ServiceRegistration,
  type ListenOptions,
} from "./server/server.js";
export type { TransportOptions } from "./transport/server/listener.js";

// Client
export {
  createClient,
  closeClient,
  clientProviders,
  type Client,
  type ClientMethod,
  type ClientResult,
  type ProtoClient,
  type ProtoServiceRef,
} from "./client/create-client.js";
export { callOptions, type CallOptions } from "./client/call-options.js";
export type { ClientOptions, ClientContentType, TokenSource } from "./client/options.js";
export { Provider, type ProviderInit } from "./client/provider.js";
export { StaticDirectory, type Directory } from "./client/cluster/directory.js";
export type { ClusterPolicy, ClusterPolicyName, ClusterContext, Invocation, Attempt } from "./client/cluster/cluster.js";
export { FailoverError } from "./client/cluster/failover-error.js";
export type { LoadBalancer, LoadBalancerName } from "./client/loadbalance/load-balancer.js";
export type { ClientCall, ClientInterceptor, ClientNext } from "./client/interceptor.js";

// Built-ins: auth, CORS, gRPC extras, health
export type { AuthOptions, TokenVerifier } from "./server/auth.js";
export { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, type CorsOptions } from "./server/cors.js";
export { responseCompression } from "./protocol-grpc/server-responder.js";
export { HealthService, HEALTH_SERVICE_NAME } from "./server/health.js";
