// Owns `schemaLock`, `parseSchemaLock`, `diffSchemaLocks`, `formatSchemaChanges`. The lock of some
// services (their IDL-less methods), keys sorted so the file diffs well. Must not change: what a
// schema lock records (older locks must still parse and diff).
import type { ServiceDescriptor } from "../service/descriptors.js";
import { deriveSchema } from "./derive.js";
import type { FieldType, SchemaField } from "./model.js";

/**
 * The schema lock (`triple-rpc.lock.json`): what the wire contract of IDL-less services is —
 * services, methods, messages, field numbers and types — as derived from the classes, so a CI
 * step can tell a compatible change (a new optional field, a new method) from one that breaks
 * deployed clients (a field number reused or retyped, a required field added, a method removed
 * or renamed, a parameter reordered, inserted or removed). Services bound to a .proto are left
 * out: their .proto file is their contract.
 *
 * Two callers read a request differently: by field number (protobuf: gRPC, Connect proto) or
 * name (ProtoJSON, a JSON object), and by position (Triple JSON's array of arguments, sent by our
 * client, dubbo-js and Dubbo's generic callers). So the lock records each method's parameters in
 * order, and a change that moves a parameter to another position is breaking even where its
 * field number is pinned: an old positional caller would bind its arguments to the wrong ones.
 */
export interface SchemaLock {
  /** The format of this file. */
  readonly lockVersion: 1;
  /** By service full name. */
  readonly services: Record<string, { readonly methods: Record<string, LockMethod> }>;
  /** By message full name. */
  readonly messages: Record<string, { readonly fields: Record<string, LockField> }>;
}

/** One method in the lock. */
interface LockMethod {
  readonly input: string;
  readonly output: string;
  readonly clientStreaming: boolean;
  readonly serverStreaming: boolean;
  /**
   * The request's parameters in position order (their field names), for methods whose request
   * message is their parameter list; absent for the others, and in locks written before
   * positions were recorded (their positions are then read from the field numbers).
   */
  readonly params?: readonly string[];
}

/** One field in the lock: its number and type (`string`, `int64` …, or `.pkg.Message`). */
interface LockField {
  readonly number: number;
  readonly type: string;
  readonly repeated: boolean;
  readonly map: boolean;
  readonly optional: boolean;
  /** The binder refuses a request without it. */
  readonly required: boolean;
}

/** One difference between a lock and the current schema. */
export interface SchemaChange {
  readonly breaking: boolean;
  /** Where: `pkg.Service/Method`, or `pkg.Message.field`. */
  readonly where: string;
  /** What changed and, for a breaking change, how to keep compatibility. */
  readonly message: string;
}

function typeName(t: FieldType): string {
  return "scalar" in t ? t.scalar : `.${t.message}`;
}

function lockField(f: SchemaField): LockField {
  return { number: f.number, type: typeName(f.type), repeated: f.repeated, map: f.map, optional: f.optional, required: f.required === true };
}

/** The lock of some services (their IDL-less methods), keys sorted so the file diffs well. */
export function schemaLock(services: readonly ServiceDescriptor[]): SchemaLock {
  const { files, methods: derived } = deriveSchema(services);
  const positions = new Map<string, readonly string[]>();
  for (const sd of services) {
    for (const md of sd.methods) {
      const d = derived.get(md);
      if (d?.requestShape === "params" && d.paramFields.length > 0) positions.set(`${sd.name}/${md.name}`, d.paramFields);
    }
  }
  const svc: Record<string, { methods: Record<string, LockMethod> }> = {};
  const messages: Record<string, { fields: Record<string, LockField> }> = {};
  for (const file of files) {
    for (const s of file.services) {
      if (s.methods.length === 0) continue;
      const methods: Record<string, LockMethod> = {};
      for (const m of [...s.methods].sort((a, b) => a.name.localeCompare(b.name))) {
        const params = positions.get(`${s.fullName}/${m.name}`);
        methods[m.name] = {
          input: m.input,
          output: m.output,
          clientStreaming: m.clientStreaming,
          serverStreaming: m.serverStreaming,
          ...(params ? { params: [...params] } : {}),
        };
      }
      svc[s.fullName] = { methods };
    }
    for (const m of file.messages) {
      const fields: Record<string, LockField> = {};
      for (const f of [...m.fields].sort((a, b) => a.number - b.number)) fields[f.name] = lockField(f);
      messages[m.fullName] = { fields };
    }
  }
  return { lockVersion: 1, services: sortKeys(svc), messages: sortKeys(messages) };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** Reads a lock file's JSON, refusing what is not one. */
export function parseSchemaLock(text: string, where: string): SchemaLock {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${where} is not JSON (${(e as Error).message}): regenerate it with triple-rpc schema <module> --write ${where}`);
  }
  const lock = v as SchemaLock;
  if (lock?.lockVersion !== 1 || typeof lock.services !== "object" || typeof lock.messages !== "object") {
    throw new Error(`${where} is not a triple-rpc schema lock (lockVersion 1): regenerate it with triple-rpc schema <module> --write ${where}`);
  }
  return lock;
}

function describeField(f: LockField): string {
  const type = f.map ? `map<string, ${f.type}>` : f.repeated ? `repeated ${f.type}` : f.optional ? `optional ${f.type}` : f.type;
  return `${type}${f.required ? " (required)" : ""}`;
}

/** Messages reachable from method inputs: where a new required field is refused. */
function inputMessages(lock: SchemaLock): Set<string> {
  const out = new Set<string>();
  const visit = (name: string) => {
    if (out.has(name)) return;
    out.add(name);
    for (const f of Object.values(lock.messages[name]?.fields ?? {})) if (f.type.startsWith(".")) visit(f.type.slice(1));
  };
  for (const s of Object.values(lock.services)) for (const m of Object.values(s.methods)) visit(m.input);
  return out;
}

/**
 * The changes from `before` (the lock) to `after` (the schema now), breaking ones first. Fields
 * are matched by number, as the wire does; a name found at another number is a moved field.
 */
export function diffSchemaLocks(before: SchemaLock, after: SchemaLock): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const pairs = diffServices(before, after, changes);
  const inputs = inputMessages(after);
  const compared = new Set<string>();
  // Messages by name, and the request/response of each method kept (its message may have been renamed).
  for (const name of Object.keys(before.messages)) if (after.messages[name]) pairs.push([name, name]);
  for (const [a, b] of pairs) {
    const key = `${a}\0${b}`;
    if (compared.has(key)) continue;
    compared.add(key);
    diffMessage(b, before.messages[a]?.fields ?? {}, after.messages[b]?.fields ?? {}, inputs.has(b), changes);
  }
  return changes.sort((x, y) => Number(y.breaking) - Number(x.breaking));
}

function diffServices(before: SchemaLock, after: SchemaLock, changes: SchemaChange[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [sname, s] of Object.entries(before.services)) {
    const now = after.services[sname];
    for (const [mname, m] of Object.entries(s.methods)) {
      const where = `${sname}/${mname}`;
      const n = now?.methods[mname];
      if (!n) {
        const why = now ? "method removed or renamed" : "service removed or renamed";
        changes.push({ breaking: true, where, message: `${why}: deployed clients calling it get unimplemented; keep it (it may delegate to the new one)` });
        continue;
      }
      if (n.clientStreaming !== m.clientStreaming || n.serverStreaming !== m.serverStreaming) {
        changes.push({
          breaking: true,
          where,
          message: `streaming changed from ${kind(m)} to ${kind(n)}: deployed clients call it the old way; add a new method instead`,
        });
      }
      diffPositions(where, before.messages[m.input]?.fields, m, n, changes);
      pairs.push([m.input, n.input], [m.output, n.output]);
    }
    if (now)
      for (const mname of Object.keys(now.methods))
        if (!s.methods[mname]) changes.push({ breaking: false, where: `${sname}/${mname}`, message: "method added" });
  }
  for (const sname of Object.keys(after.services)) if (!before.services[sname]) changes.push({ breaking: false, where: sname, message: "service added" });
  return pairs;
}

/** A method's parameters in position order: recorded, or (an older lock) read from its request's field numbers. */
function positionsOf(m: LockMethod, fields: Record<string, LockField> | undefined): readonly string[] | undefined {
  if (m.params) return m.params;
  if (!fields || m.clientStreaming) return undefined;
  return Object.entries(fields)
    .sort(([, a], [, b]) => a.number - b.number)
    .map(([name]) => name);
}

/**
 * Positional callers (Triple JSON's argument array) bind by position: every parameter of the
 * lock must keep its position; new ones go after the last.
 */
function diffPositions(where: string, fields: Record<string, LockField> | undefined, m: LockMethod, n: LockMethod, changes: SchemaChange[]): void {
  const was = positionsOf(m, fields);
  const now = n.params;
  if (!was || !now || n.clientStreaming) return;
  const guessed = m.params ? "" : " (positions read from the lock's field numbers: rewrite the lock with --write to record them)";
  for (let i = 0; i < was.length; i++) {
    if (now[i] === was[i]) continue;
    const moved = now.indexOf(was[i]);
    const what = moved < 0 ? `is gone (now ${now[i] === undefined ? "nothing" : `"${now[i]}"`} there)` : `moved to #${moved + 1} (now "${now[i]}" there)`;
    changes.push({
      breaking: true,
      where,
      message:
        `parameter #${i + 1} "${was[i]}" ${what}: callers that send the arguments as a JSON array by position (Triple JSON: ` +
        `triple-rpc clients, dubbo-js) would bind their values to the wrong parameters; keep "${was[i]}" at #${i + 1} and add new parameters after the last${guessed}`,
    });
  }
}

function kind(m: LockMethod): string {
  return m.clientStreaming ? (m.serverStreaming ? "bidi streaming" : "client streaming") : m.serverStreaming ? "server streaming" : "unary";
}

function diffMessage(message: string, before: Record<string, LockField>, after: Record<string, LockField>, isInput: boolean, changes: SchemaChange[]): void {
  const byNumber = new Map(Object.entries(after).map(([n, f]) => [f.number, n]));
  for (const [name, f] of Object.entries(before)) {
    const where = `${message}.${name}`;
    const sameName = after[name];
    const atNumber = byNumber.get(f.number);
    if (sameName && sameName.number !== f.number) {
      changes.push({
        breaking: true,
        where,
        message:
          `field number changed from ${f.number} to ${sameName.number} (a parameter or field reordered, or one inserted before it): ` +
          `deployed clients still send it as ${f.number}; pin it with tag: ${f.number} (@Field({ tag: ${f.number} }); a parameter must also go back to its position, as positional callers bind by position)`,
      });
    } else if (!sameName && atNumber !== undefined && before[atNumber] === undefined) {
      continue; // its number went to a new field: reported below as a reuse
    } else if (!sameName) {
      changes.push({
        breaking: true,
        where,
        message: `field ${f.number} removed: deployed clients still send or expect it; keep it (optional if it is no longer needed)`,
      });
      continue;
    }
    if (sameName && atNumber === name) diffField(where, f, sameName, changes);
  }
  const oldByNumber = new Map(Object.entries(before).map(([n, f]) => [f.number, n]));
  for (const [name, f] of Object.entries(after)) {
    if (before[name]) continue;
    const where = `${message}.${name}`;
    const old = oldByNumber.get(f.number);
    if (old !== undefined) {
      changes.push({
        breaking: true,
        where: `${message}.${old}`,
        message: `field number ${f.number} reused by "${name}": deployed clients send ${old} there; give ${name} a tag no field ever had (and keep ${old}, or leave ${f.number} unused)`,
      });
    } else if (f.required && isInput) {
      changes.push({
        breaking: true,
        where,
        message: `required field ${f.number} added: deployed clients do not send it and get invalid_argument; make it optional`,
      });
    } else changes.push({ breaking: false, where, message: `field ${f.number} added (${describeField(f)})` });
  }
}

function diffField(where: string, f: LockField, n: LockField, changes: SchemaChange[]): void {
  if (f.type !== n.type || f.repeated !== n.repeated || f.map !== n.map) {
    changes.push({
      breaking: true,
      where,
      message: `field ${f.number} retyped from ${describeField(f)} to ${describeField(n)}: deployed clients encode the old type; add a new field with a new tag instead`,
    });
  } else if (!f.required && n.required) {
    changes.push({ breaking: true, where, message: `field ${f.number} became required: deployed clients may leave it out; keep it optional` });
  } else if (f.required && !n.required) {
    changes.push({ breaking: false, where, message: `field ${f.number} became optional` });
  }
}

/** The readable report of a check: breaking changes, then compatible ones. */
export function formatSchemaChanges(changes: readonly SchemaChange[], lockPath: string): string {
  const breaking = changes.filter((c) => c.breaking);
  const compatible = changes.filter((c) => !c.breaking);
  const lines: string[] = [];
  if (breaking.length > 0) {
    lines.push(`${breaking.length} breaking change${breaking.length === 1 ? "" : "s"} against ${lockPath}:`);
    for (const c of breaking) lines.push(`  ✗ ${c.where}: ${c.message}`);
  }
  if (compatible.length > 0) {
    lines.push(`${compatible.length} compatible change${compatible.length === 1 ? "" : "s"} (record them with --write ${lockPath}):`);
    for (const c of compatible) lines.push(`  + ${c.where}: ${c.message}`);
  }
  if (lines.length === 0) lines.push(`the schema matches ${lockPath}`);
  else if (breaking.length > 0) {
    lines.push("If a break is intended (no deployed client uses the old shape), rewrite the lock with --write and say so in review.");
  }
  return lines.join("\n");
}
