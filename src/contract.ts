/// <reference types="node" preserve="true" />
/**
 * `triple-rpc/contract`: what a service contract needs and nothing else — the decorators, type
 * specs, codes and errors. A contract class imports only this, so a client app (or a browser
 * bundle) that shares it with the server pulls in no server code:
 *
 * ```ts
 * import { Method, Param, Service, unimplemented } from "triple-rpc/contract";
 *
 * @Service("greet.GreetService")
 * export class GreetContract {
 *   @Method() greet(@Param("name") name: string): Promise<string> { return unimplemented(); }
 * }
 *
 * // server: class GreetImpl extends GreetContract { override async greet(name: string) { … } }
 * // client: createClient(GreetContract, { providers: "127.0.0.1:50051" })
 * ```
 */
import "reflect-metadata";
import { Code } from "./protocol/code.js";
import { RpcError } from "./protocol/rpc-error.js";

export { Code, codeFromName, codeName } from "./protocol/code.js";
export { RpcError, type RpcErrorOptions, type ErrorDetail, type MetadataInit } from "./protocol/rpc-error.js";
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
  type McpToolOptions,
  type ParamOptions,
  type HttpMapping,
  type ParamSource,
} from "./service/decorators.js";
export { Get, Post, Put, Patch, Delete, Path, Query, Header, Body } from "./service/rest-decorators.js";
export { JavaClass } from "./service/java-class.js";
export { T, InMemoryFile, type TypeDesc, type TypeSpec, type FieldDesc, type FieldOptions } from "./service/type-desc.js";
export { StreamedFile } from "./service/file-upload.js";
export { Download, type DownloadBody, type DownloadOptions } from "./service/download.js";
export type { MethodKind, HttpRoute } from "./service/descriptors.js";
export type { Constraints, StringFormat } from "./service/constraints.js";
export { BAD_REQUEST_TYPE, badRequestViolations, type FieldViolation } from "./protocol/bad-request.js";

/**
 * The body of a contract method: implementations override it. Called anyway (the contract class
 * registered as a service), it answers `unimplemented`.
 */
export function unimplemented(): never {
  throw new RpcError(Code.Unimplemented, "not implemented: this is the contract's method; register a class that overrides it");
}
