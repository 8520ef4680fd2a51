// Owns the entries' own bindings of names that lazily loaded code uses too (`StreamedFile`,
// `JavaClass`, `BAD_REQUEST_TYPE`, `badRequestViolations`): the same values, bound here as
// constants. Must not change: a plain re-export would tie their modules to every page that imports
// the entry, whether it uses them or not (esbuild's code splitting follows a re-export to the
// module that declares it; docs/web.md "Size"); this module is left out when none is used.
import { BAD_REQUEST_TYPE as BadRequestType, badRequestViolations as violations } from "./protocol/bad-request.js";
import { JavaClass as JavaClassDecorator } from "./service/java-class.js";
import { StreamedFile as StreamedFileClass } from "./service/file-upload.js";

/** `@JavaClass("org.example.User")`: the Java class a decorated class stands for in hessian2 and fastjson2. */
export const JavaClass = JavaClassDecorator;
/** An uploaded file that streams (service/file-upload.ts). */
export const StreamedFile = StreamedFileClass;
export type StreamedFile = StreamedFileClass;
/** The type name of the `google.rpc.BadRequest` error detail. */
export const BAD_REQUEST_TYPE = BadRequestType;
/** The field violations of an error's `google.rpc.BadRequest` details; empty when it has none. */
export const badRequestViolations = violations;
