// Owns `describeTool`, `McpTools`. Describes one registered method as a tool; throws a TypeError
// naming what keeps it from being one. Must not change: limits before reading, authorization before
// decoding (docs/security.md).
import { bindError } from "../codec/bind-error.js";
import { bindJsonValue } from "../codec/json-codec.js";
import { quote } from "../protocol/wire-text.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { MethodDescriptor, ServiceDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { type JsonSchema, JsonSchemaBuilder } from "./openapi-schema.js";

/**
 * How a tool's result becomes `structuredContent`: the result itself (a class or a .proto
 * message: a JSON object), `{ result }` around it (scalars, arrays, maps), or none (no declared
 * result type: text content only).
 */
type ToolOutput = "object" | "wrapped" | undefined;

/** One method offered as an MCP tool. */
export interface McpTool {
  readonly name: string;
  readonly route: RegisteredMethod;
  /** The tool's `tools/list` entry, as JSON text (built once, at registration). */
  readonly json: string;
  readonly output: ToolOutput;
  /** Binds `tools/call`'s `arguments` object to the method's arguments; throws `invalid_argument`. */
  readonly bind: (args: Record<string, unknown>) => unknown[];
  /**
   * What validation's field paths start with that the tool's arguments do not show: `arg1.` when
   * the arguments object is the method's one (unnamed) class parameter.
   */
  readonly fieldPrefix: string | undefined;
}

/** Types a tool argument or result cannot have: streamed uploads and downloads are not JSON. */
const NOT_JSON: ReadonlySet<TypeDesc["kind"]> = new Set(["upload", "download"]);

/** The default tool name: the service name's last segment, `_`, the wire name; other characters become `_`. */
function defaultName(md: MethodDescriptor): string {
  const svc = md.serviceName.slice(md.serviceName.lastIndexOf(".") + 1);
  return `${svc}_${md.name}`.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64);
}

/**
 * A schema whose `#/components/schemas/X` references point into its own `$defs` instead: a
 * tool's schema must stand alone. `top` (a component name) is inlined as the schema itself.
 */
function standalone(root: JsonSchema, components: Record<string, JsonSchema>, top?: string): JsonSchema {
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (typeof v !== "object" || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = k === "$ref" && typeof x === "string" ? x.replace("#/components/schemas/", "#/$defs/") : rewrite(x);
    }
    return out;
  };
  const schema = rewrite(top === undefined ? root : components[top]) as JsonSchema;
  const defs = rewrite(components) as Record<string, JsonSchema>;
  // The inlined class stays in $defs only when something refers to it (a self-reference).
  if (top !== undefined && !JSON.stringify(defs).includes(`"#/$defs/${top}"`)) delete defs[top];
  if (Object.keys(defs).length > 0) schema.$defs = defs;
  return schema;
}

/** The component name a `{ $ref }` schema points to. */
function refName(s: JsonSchema): string {
  return String(s.$ref).slice("#/components/schemas/".length);
}

/** The tool's `inputSchema` (always `type: object`) and the binder of its `arguments`. */
function inputOf(md: MethodDescriptor, where: string): { schema: JsonSchema; bind: McpTool["bind"]; fieldPrefix?: string } {
  if (md.requestType) {
    const name = md.requestType.fullName.replace(/^\./, "");
    return { schema: { type: "object", description: `ProtoJSON of ${name}` }, bind: (args) => bindJsonValue(md, args) };
  }
  const params = md.params;
  for (const p of params) {
    if (NOT_JSON.has(p.type.kind)) throw new TypeError(`${where}: a streamed upload parameter cannot be an MCP tool argument (arguments are JSON)`);
  }
  const sb = new JsonSchemaBuilder();
  if (params.length === 1 && params[0].name === undefined && params[0].type.kind === "class") {
    const top = refName(sb.of(params[0].type));
    return { schema: standalone({}, sb.components, top), bind: (args) => bindJsonValue(md, [args]), fieldPrefix: "arg1." };
  }
  if (params.some((p) => p.name === undefined)) {
    throw new TypeError(
      `${where}: an MCP tool takes named arguments; name every parameter (@Param("name") or @Method({ params: [{ name, type }] })), or take one decorated class`,
    );
  }
  const properties: Record<string, JsonSchema> = {};
  for (const p of params) properties[p.name as string] = sb.ofField(p);
  const required = params.filter((p) => !p.optional).map((p) => p.name as string);
  const root: JsonSchema = { type: "object", properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
  return { schema: standalone(root, sb.components), bind: namedBinder(md) };
}

/** Binds an `arguments` object by parameter names: unknown and missing names are named in the error. */
function namedBinder(md: MethodDescriptor): McpTool["bind"] {
  const names = md.params.map((p) => p.name as string);
  const known = new Set(names);
  const takes = names.length === 0 ? "the tool takes no arguments" : `the tool takes ${names.join(", ")}`;
  return (args) => {
    const unknown = Object.keys(args).filter((k) => !known.has(k));
    if (unknown.length > 0)
      throw bindError(
        `unknown argument${unknown.length === 1 ? "" : "s"} ${unknown
          .slice(0, 8)
          .map((k) => quote(k))
          .join(", ")}: ${takes}`,
      );
    const missing = md.params.filter((p) => !p.optional && (args[p.name as string] === undefined || args[p.name as string] === null));
    if (missing.length > 0) throw bindError(`missing argument${missing.length === 1 ? "" : "s"} ${missing.map((p) => p.name).join(", ")}`);
    if (names.length === 0) return [];
    return bindJsonValue(
      md,
      names.map((n) => args[n]),
    );
  };
}

/** The tool's `outputSchema` (a JSON object's), and how its result is shaped to fit. */
function outputOf(md: MethodDescriptor, where: string): { schema: JsonSchema | undefined; output: ToolOutput } {
  if (md.responseType) return { schema: { type: "object", description: `ProtoJSON of ${md.responseType.fullName.replace(/^\./, "")}` }, output: "object" };
  const t = md.returns;
  if (t === undefined) return { schema: undefined, output: undefined };
  if (NOT_JSON.has(t.kind)) throw new TypeError(`${where}: a download result cannot be an MCP tool result (results are JSON)`);
  const sb = new JsonSchemaBuilder();
  const s = sb.of(t);
  if (t.kind === "class") return { schema: standalone({}, sb.components, refName(s)), output: "object" };
  const root: JsonSchema = { type: "object", properties: { result: s }, required: ["result"] };
  return { schema: standalone(root, sb.components), output: "wrapped" };
}

/** The tool's `annotations`: read-only and idempotent for a method without side effects, destructive where declared. */
function annotationsOf(md: MethodDescriptor, title: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = title === undefined ? {} : { title };
  out.readOnlyHint = md.idempotent;
  if (md.idempotent) out.idempotentHint = true;
  const destructive = md.mcp?.destructive;
  if (destructive !== undefined) out.destructiveHint = destructive;
  return out;
}

/** Describes one registered method as a tool; throws a TypeError naming what keeps it from being one. */
function describeTool(route: RegisteredMethod): McpTool {
  const md = route.descriptor;
  const where = `${md.serviceName}/${md.name} (MCP tool)`;
  const opt = md.mcp ?? {};
  const name = opt.name ?? defaultName(md);
  const input = inputOf(md, where);
  const out = outputOf(md, where);
  const description = opt.description ?? md.description;
  const entry: Record<string, unknown> = { name };
  if (opt.title !== undefined) entry.title = opt.title;
  if (description !== undefined) entry.description = description;
  entry.inputSchema = input.schema;
  if (out.schema) entry.outputSchema = out.schema;
  entry.annotations = annotationsOf(md, opt.title);
  return { name, route, json: JSON.stringify(entry), output: out.output, bind: input.bind, fieldPrefix: input.fieldPrefix };
}

/**
 * The server's tools: the registered methods that opted in, by tool name. A name is one tool:
 * a second method (or a second registration of a service under another version or group)
 * claiming it is refused at registration.
 */
export class McpTools {
  private readonly byName = new Map<string, McpTool>();

  /** Adds a method if it opted in (`md.mcp`); throws a TypeError when it cannot be a tool or its name is taken. */
  add(route: RegisteredMethod): void {
    if (route.descriptor.mcp === undefined) return;
    const tool = describeTool(route);
    const prev = this.byName.get(tool.name);
    if (prev && prev.route !== route) {
      const a = prev.route.descriptor;
      const b = route.descriptor;
      const what = (m: MethodDescriptor, s: ServiceDescriptor) =>
        `${m.path}${s.version ? ` version "${s.version}"` : ""}${s.group ? ` group "${s.group}"` : ""}`;
      throw new TypeError(
        `MCP tool name ${quote(tool.name)} is taken by ${what(a, prev.route.service)}; give ${what(b, route.service)} another with @Method({ mcp: { name } })`,
      );
    }
    this.byName.set(tool.name, tool);
  }

  /** Takes a registration's tools away. */
  removeService(service: ServiceDescriptor): void {
    for (const [name, tool] of this.byName) if (tool.route.service === service) this.byName.delete(name);
  }

  get(name: string): McpTool | undefined {
    return this.byName.get(name);
  }

  all(): IterableIterator<McpTool> {
    return this.byName.values();
  }
}
