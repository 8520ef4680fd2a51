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
// TypeScript's emitted decorator metadata (design:paramtypes) is recorded only when a polyfill
// is loaded before the contract classes are defined: this entry loads it on Node.
import "reflect-metadata";
import { useNodeRequire } from "./service/metadata.js";

// What describe.ts (.proto files) and node-builtin.ts (Node 20 before 20.16) load with: they name
// no `require`, so that browser bundles of them carry no require shim.
useNodeRequire(require);

export * from "./contract-browser.js";
// Node.js's types and values name the declarations themselves (contract-browser.ts binds them
// as constants in entry-bindings.ts, for browser bundlers): the same values.
export { JavaClass } from "./service/java-class.js";
export { StreamedFile } from "./service/file-upload.js";
export { BAD_REQUEST_TYPE, badRequestViolations } from "./protocol/bad-request.js";
