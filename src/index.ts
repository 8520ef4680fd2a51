/// <reference types="node" preserve="true" />
/**
 * triple-rpc: decorated TypeScript classes as RPC services over the Triple protocol
 * (HTTP/1.1 and HTTP/2 unary, gRPC streaming) on one port. This entry holds everything: the
 * contract (decorators, types, errors) and the client (re-exported from `./client.js`, which
 * includes `./contract.js`), and the server.
 */
import "reflect-metadata";

export * from "./client.js";
export { codeFromHttpStatus, httpStatusOf, legacyStatusOf } from "./protocol/status-table.js";
export type {
  AuthRequirement,
  MethodDescriptor,
  ParamDescriptor,
  ServiceDescriptor,
} from "./service/descriptors.js";
export { describeService } from "./service/describe.js";
export { loadProto } from "./service/proto.js";
export { toProto, toProtoFiles } from "./schema/proto-text.js";
export { toOpenApi, type OpenApiOptions, type OpenApiDocument, type OpenApiService } from "./server/openapi.js";
export type { OpenApiServeOptions } from "./server/openapi-endpoint.js";
export type { McpOptions } from "./server/mcp-endpoint.js";
export type { HttpRoute } from "./service/descriptors.js";
export { CallContext, createContextKey, type ContextKey, type Identity } from "./runtime/context.js";
export { Metadata, OutgoingMetadata } from "./runtime/metadata.js";
export type { Call, Interceptor, Next } from "./runtime/interceptor.js";
export { DEFAULT_LIMITS, DEFAULT_UPLOADS, type LimitOptions, type Limits, type UploadOptions } from "./runtime/limits.js";
export {
  createServer,
  TripleServer,
  type ServerOptions,
  type ServiceRegistration,
  type ListenOptions,
} from "./server/server.js";
export type { ServerRegistryOptions } from "./server/server-options.js";
export type { TransportOptions } from "./transport/server/listener.js";
export {
  createHandler,
  type HandlerOptions,
  type NextFunction,
  type NodeRequest,
  type NodeResponse,
  type TripleHandler,
} from "./adapters/node-handler.js";
export { expressTripleMiddleware } from "./adapters/express.js";
export { createTestClient, type TestClientOptions } from "./adapters/test-client.js";
export { createFetchHandler, type FetchHandler, type FetchHandlerOptions } from "./adapters/fetch-handler.js";
export { type FastifyInstanceLike, fastifyTriplePlugin } from "./adapters/fastify.js";
export type { ServerTelemetryOptions } from "./observability/server-observer.js";

// Built-ins: auth, CORS, gRPC extras, health
export type { AuthOptions, TokenVerifier } from "./runtime/auth.js";
export { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, type CorsOptions } from "./server/cors.js";
export { responseCompression } from "./protocol-grpc/responder.js";
export { HealthService, HEALTH_SERVICE_NAME } from "./runtime/health.js";
