// Owns `toOpenApi`. An OpenAPI 3.1 document of services: every unary and server-streaming method at
// its RPC path (`POST /<service>/<method>`, with every body type it accepts) and at its … Must not
// change: limits before reading, authorization before decoding (docs/security.md).
import { describeService } from "../service/describe.js";
import type { MethodDescriptor, ParamDescriptor, ServiceDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { ProtoSchemas } from "./openapi-proto.js";
import { type JsonSchema, JsonSchemaBuilder } from "./openapi-schema.js";

/** Options of {@link toOpenApi}. */
export interface OpenApiOptions {
  /** `info.title`. Default `triple-rpc API`. */
  title?: string;
  /** `info.version` (the API's version, not OpenAPI's). Default `1.0.0`. */
  version?: string;
  /** `info.description`. */
  description?: string;
  /** `info.license`: the API's licence (`{ name: "Apache 2.0", identifier: "Apache-2.0" }`). Default: none. */
  license?: { readonly name: string; readonly identifier?: string; readonly url?: string };
  /** `servers`: where the API is reached. Default `[{ url: "/" }]`: the origin serving the document (OpenAPI's own default, written out for linters and generators). */
  servers?: readonly { url: string; description?: string }[];
  /** Describe the RPC paths (`POST /<service>/<method>`) besides REST mappings. Default true. */
  rpcPaths?: boolean;
}

/** An OpenAPI 3.1 document (plain JSON data). */
export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, Record<string, unknown>> };

/** What {@link toOpenApi} takes per service: a class, an instance, or a descriptor. */
export type OpenApiService = object | ServiceDescriptor;

function descriptorOf(s: OpenApiService): ServiceDescriptor {
  if (typeof s === "function") return describeService(s as new () => unknown);
  if ("methods" in s && "name" in s && Array.isArray((s as ServiceDescriptor).methods)) return s as ServiceDescriptor;
  return describeService((s as object).constructor as new () => unknown);
}

/**
 * Every error status a call can end with (the server's whole table: docs/protocol.md, "Errors"),
 * and what it means. 507 is added for methods that take uploads.
 */
const ERROR_RESPONSES: Record<string, string> = {
  "400": "Invalid argument or out of range: the request could not be bound or broke a constraint (every problem listed)",
  "401": "Unauthenticated: a bearer token is missing or invalid",
  "403": "Permission denied",
  "404": "Not found: no such route, service or method, or the handler's not_found",
  "405": "Method not allowed: the path takes other HTTP methods (listed in Allow)",
  "408": "Deadline exceeded",
  "409": "Already exists, or aborted",
  "412": "Failed precondition",
  "413": "A body, part or field over its limit",
  "415": "Unsupported Content-Type or Content-Encoding",
  "429": "Resource exhausted",
  "431": "Request headers too large",
  "499": "Cancelled",
  "500": "Internal or unknown error",
  "503": "Unavailable: the server is shutting down",
  "505": "HTTP version not supported: streaming calls need HTTP/2",
};
const UPLOAD_RESPONSE = { "507": "Insufficient storage: streamed uploads over the server's disk bounds" };

const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  description: "The error body of every failed call (Triple HTTP and REST routes)",
  properties: {
    status: {
      type: "integer",
      description: "Dubbo's service status: 25 undecodable, 31 timeout, 35 unavailable, 40 bad request, 60 not found, 70 service error, 80 server error",
    },
    message: { type: "string", description: "What went wrong, naming the parameter or limit" },
    code: { type: "string", description: "The RPC code: invalid_argument, not_found, unauthenticated, …" },
    details: {
      type: "array",
      description: "Error details: protobuf messages by type name, base64; a google.rpc.BadRequest also as JSON in debug",
      items: {
        type: "object",
        properties: {
          type: { type: "string", description: "The detail's message full name: google.rpc.BadRequest, google.rpc.ErrorInfo, …" },
          value: { type: "string", contentEncoding: "base64", description: "The detail's protobuf encoding" },
          debug: {
            type: "object",
            description: "The detail as JSON (for google.rpc.BadRequest: every violation of the request)",
            properties: {
              fieldViolations: {
                type: "array",
                items: {
                  type: "object",
                  properties: {
                    field: { type: "string", description: "The path of the bad value: user.address.city, tags[2]" },
                    description: { type: "string", description: "What is wrong: is missing, must match ^[a-z]+$" },
                  },
                  required: ["field", "description"],
                },
              },
            },
          },
        },
        required: ["type", "value"],
      },
    },
  },
  required: ["status", "message", "code"],
};

/**
 * An OpenAPI 3.1 document of services: every unary and server-streaming method at its RPC path
 * (`POST /<service>/<method>`, with every body type it accepts) and at its REST mapping
 * (`@Get("/users/{id}")` …, with path, query and header parameters), request and response
 * schemas from the same type model the binder uses, the error body per status, bearer auth
 * where methods require it. Client- and bidi-streaming methods (gRPC only) are left out.
 */
export function toOpenApi(services: Iterable<OpenApiService>, options: OpenApiOptions = {}): OpenApiDocument {
  const b = new DocumentBuilder(options.rpcPaths !== false);
  const seen = new Set<string>();
  const tags: Record<string, unknown>[] = [];
  for (const s of services) {
    const svc = descriptorOf(s);
    const versionKey = `${svc.name}\0${svc.version}\0${svc.group}`;
    if (seen.has(versionKey)) continue;
    seen.add(versionKey);
    if (!tags.some((t) => t.name === svc.name)) tags.push({ name: svc.name, description: svc.description ?? `The methods of ${svc.name}` });
    for (const md of svc.methods) b.addMethod(svc, md);
  }
  const info: Record<string, unknown> = { title: options.title ?? "triple-rpc API", version: options.version ?? "1.0.0" };
  if (options.description) info.description = options.description;
  if (options.license) info.license = { ...options.license };
  const doc: OpenApiDocument = { openapi: "3.1.0", info, paths: b.paths };
  doc.servers = options.servers?.length ? options.servers.map((x) => ({ ...x })) : [{ url: "/", description: "the origin serving this document" }];
  doc.tags = tags;
  doc.components = b.components();
  return doc;
}

class DocumentBuilder {
  readonly paths: Record<string, Record<string, unknown>> = {};
  private readonly schemas = new JsonSchemaBuilder();
  private readonly protos = new ProtoSchemas(this.schemas.components);
  private bearer = false;
  /** True once a method takes uploads: the 507 answer is described. */
  private uploads = false;

  constructor(private readonly rpcPaths: boolean) {}

  addMethod(svc: ServiceDescriptor, md: MethodDescriptor): void {
    if (md.kind !== "unary" && md.kind !== "server_streaming") return;
    const id = `${svc.name}_${md.propertyKey}`.replace(/[^A-Za-z0-9_]/g, "_");
    if (this.rpcPaths) {
      const op = this.operation(svc, md, `${id}_rpc`, md.params, "rpc");
      this.put(md.path, "post", op, svc);
    }
    const http = md.http;
    if (http) {
      const body = md.params.filter((p) => p.in === undefined);
      const op = this.operation(svc, md, id, body, "rest");
      const params = md.params.filter((p) => p.in !== undefined).map((p) => this.parameter(p));
      op.parameters = [...params, ...(op.parameters as unknown[])];
      this.put(http.path, http.method.toLowerCase(), op, svc);
    }
  }

  /** Adds an operation; a second registration (another version or group) widens its header enums. */
  private put(path: string, verb: string, op: Record<string, unknown>, svc: ServiceDescriptor): void {
    const item = (this.paths[path] ??= {});
    const prev = item[verb] as { parameters: { name: string; schema: { enum?: string[] } }[] } | undefined;
    if (!prev) {
      item[verb] = op;
      return;
    }
    for (const [name, value] of [
      ["tri-service-version", svc.version],
      ["tri-service-group", svc.group],
    ] as const) {
      const p = prev.parameters.find((x) => x.name === name);
      if (p?.schema.enum && !p.schema.enum.includes(value)) p.schema.enum.push(value);
    }
  }

  private operation(svc: ServiceDescriptor, md: MethodDescriptor, operationId: string, body: readonly ParamDescriptor[], form: "rpc" | "rest") {
    const op: Record<string, unknown> = {
      operationId,
      tags: [svc.name],
      summary: form === "rpc" ? `${svc.name}/${md.name} (RPC path)` : `${svc.name}/${md.name}`,
    };
    if (md.description) op.description = md.description;
    op.parameters = routingHeaders(svc);
    const requestBody = form === "rest" && body.length === 0 ? undefined : this.requestBody(md, body);
    if (requestBody) op.requestBody = requestBody;
    op.responses = this.responses(md);
    op.security = [];
    if (md.auth) {
      this.bearer = true;
      op.security = [{ bearerAuth: [] }];
      if (md.auth !== true) op.description = `${md.description ? `${md.description}\n\n` : ""}Requires one of the roles: ${md.auth.roles.join(", ")}.`;
    }
    return op;
  }

  private parameter(p: ParamDescriptor): Record<string, unknown> {
    const out: Record<string, unknown> = {
      name: p.name,
      in: p.in,
      required: p.in === "path" || !p.optional,
      schema: this.schemas.ofField(p),
    };
    if (p.in === "query" && p.type.kind === "array") Object.assign(out, { style: "form", explode: true });
    return out;
  }

  private requestBody(md: MethodDescriptor, params: readonly ParamDescriptor[]): Record<string, unknown> {
    if (md.requestType) {
      const name = md.requestType.fullName.replace(/^\./, "");
      return {
        required: true,
        content: {
          "application/json": { schema: this.protos.message(md.requestType) },
          "application/proto": { schema: { type: "string", format: "binary", description: `protobuf ${name}` } },
        },
      };
    }
    return { required: params.some((p) => !p.optional), content: bodyContent(this.schemas, params) };
  }

  private responses(md: MethodDescriptor): Record<string, unknown> {
    const out: Record<string, unknown> = { "200": { description: "The result", content: this.resultContent(md) } };
    for (const status of Object.keys(ERROR_RESPONSES)) out[status] = { $ref: `#/components/responses/Error${status}` };
    if (md.params.some((p) => UPLOADS.has(p.type.kind))) {
      this.uploads = true;
      out["507"] = { $ref: "#/components/responses/Error507" };
    }
    return out;
  }

  /** The 200 answer's content: SSE for a server stream; JSON and XML, or for a .proto method ProtoJSON and protobuf. */
  private resultContent(md: MethodDescriptor): Record<string, unknown> {
    if (md.kind === "server_streaming") {
      return { "text/event-stream": { schema: { type: "string", description: "Server-Sent Events: one `data:` line of JSON per message" } } };
    }
    if (md.responseType) {
      const name = md.responseType.fullName.replace(/^\./, "");
      return {
        "application/json": { schema: this.protos.message(md.responseType) },
        "application/proto": { schema: { type: "string", format: "binary", description: `protobuf ${name} (ask with Accept or send application/proto)` } },
      };
    }
    const schema = md.returns ? this.schemas.of(md.returns) : {};
    return { "application/json": { schema }, "application/xml": { schema } };
  }

  components(): Record<string, unknown> {
    const responses: Record<string, unknown> = {};
    const all = { ...ERROR_RESPONSES, ...(this.uploads ? UPLOAD_RESPONSE : {}) };
    for (const [status, description] of Object.entries(all)) {
      responses[`Error${status}`] = { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    }
    const out: Record<string, unknown> = { schemas: { ...this.schemas.components, Error: ERROR_SCHEMA }, responses };
    if (this.bearer) out.securitySchemes = { bearerAuth: { type: "http", scheme: "bearer" } };
    return out;
  }
}

/** The version and group headers that select a registration, for services that have them. */
function routingHeaders(svc: ServiceDescriptor): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (svc.version) out.push({ name: "tri-service-version", in: "header", required: true, schema: { type: "string", enum: [svc.version] } });
  if (svc.group) out.push({ name: "tri-service-group", in: "header", required: true, schema: { type: "string", enum: [svc.group] } });
  return out;
}

const SCALAR: ReadonlySet<TypeDesc["kind"]> = new Set(["string", "number", "boolean", "bigint", "date"]);
/** Parameter types a client sends as a file or raw bytes. */
const UPLOADS: ReadonlySet<TypeDesc["kind"]> = new Set(["file", "upload"]);
const BYTES: ReadonlySet<TypeDesc["kind"]> = new Set(["bytes", "file", "upload"]);

/** The body's schema per content type the binder accepts for these parameters. */
function bodyContent(sb: JsonSchemaBuilder, params: readonly ParamDescriptor[]): Record<string, unknown> {
  const n = params.length;
  const allNamed = n > 0 && params.every((p) => p.name);
  const required = params.filter((p) => !p.optional).length;
  const asArray: JsonSchema = { type: "array", prefixItems: params.map((p) => sb.ofField(p)), items: false, minItems: required, maxItems: n };
  const forms: JsonSchema[] = [asArray];
  if (n === 1) forms.push(sb.ofField(params[0]));
  if (allNamed && !(n === 1 && forms.length > 1 && params[0].type.kind === "class")) forms.push(named(sb, params, "base64"));
  const content: Record<string, unknown> = {};
  // Generators take the first content type: a method with a file or bytes sends multipart first.
  if (allNamed && params.some((p) => BYTES.has(p.type.kind))) content["multipart/form-data"] = { schema: named(sb, params, "binary") };
  content["application/json"] = { schema: forms.length === 1 ? forms[0] : { anyOf: forms } };
  if (allNamed) {
    content["application/x-www-form-urlencoded"] = { schema: named(sb, params, "base64") };
    content["multipart/form-data"] ??= { schema: named(sb, params, "binary") };
  } else if (n === 1 && params[0].type.kind === "class") {
    content["application/x-www-form-urlencoded"] = { schema: sb.ofField(params[0]) };
  }
  if (n >= 1) content["application/xml"] = { schema: n === 1 ? sb.ofField(params[0]) : allNamed ? named(sb, params, "base64") : asArray };
  if (n === 1 && SCALAR.has(params[0].type.kind)) content["text/plain"] = { schema: { type: "string" } };
  return content;
}

/** An object with one member per named parameter. */
function named(sb: JsonSchemaBuilder, params: readonly ParamDescriptor[], bytes: "base64" | "binary"): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const p of params) properties[p.name as string] = sb.ofField(p, bytes);
  const required = params.filter((p) => !p.optional).map((p) => p.name as string);
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}
