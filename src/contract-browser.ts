/// <reference types="node" preserve="true" />
/**
 * `triple-rpc/contract` for browsers (package.json's `browser` condition of that entry): the same
 * exports as `contract.ts` without loading the reflect-metadata polyfill, which only TypeScript's
 * emitted decorator metadata needs (esbuild and browsers' bundlers emit none). Keep the exports
 * of the two entries identical: `contract.ts` re-exports this file.
 */
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
export { JavaClass } from "./entry-bindings.js";
export { T, InMemoryFile, type TypeDesc, type TypeSpec, type TypeOf, type ValueOf, type FieldDesc, type FieldOptions } from "./service/type-desc.js";
export type { TypedMethodDecorator, TypedFieldDecorator, ParamsCheck, FieldCheck } from "./service/typed-params.js";
export { StreamedFile } from "./entry-bindings.js";
export { Download, type DownloadBody, type DownloadOptions } from "./service/download.js";
export type { MethodKind, HttpRoute } from "./service/descriptors.js";
export type { Constraints, StringFormat } from "./service/constraints.js";
export { BAD_REQUEST_TYPE, badRequestViolations } from "./entry-bindings.js";
export type { FieldViolation } from "./protocol/bad-request.js";

/**
 * The body of a contract method: implementations override it. Called anyway (the contract class
 * registered as a service), it answers `unimplemented`.
 */
export function unimplemented(): never {
  throw new RpcError(Code.Unimplemented, "not implemented: this is the contract's method; register a class that overrides it");
}
