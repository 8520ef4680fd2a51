// Owns `RestRouter`. Routes REST requests (`@Get("/users/{id}")` …) to methods. Everything is built
// at registration: a path without variables is one `Map.get`. Must not change: the rules every
// protocol relies on (docs/architecture.md).
import { compileRestBinder, type RestBinder } from "../codec/rest-binder.js";
import { Code } from "../protocol/code.js";
import { firstHeader, H, type HeaderMap } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { RegisteredMethod } from "./router.js";
import { cutText, quote } from "../protocol/wire-text.js";

/** A REST route's method and its compiled binder. */
interface RestEntry {
  readonly method: RegisteredMethod;
  readonly binder: RestBinder;
}

/** The registrations of one HTTP method at one path shape: plain, and by version and group. */
interface Variants {
  plain: RestEntry | undefined;
  readonly byKey: Map<string, RestEntry>;
}

/** A node of the template trie: literal children, one variable child, the routes ending here. */
interface Node {
  readonly literals: Map<string, Node>;
  param: Node | undefined;
  readonly methods: Map<string, Variants>;
}

/** A request matched to a REST route. */
export interface RestMatch {
  readonly route: RegisteredMethod;
  readonly binder: RestBinder;
  /** The raw (still percent-encoded) values of the path variables, in template order. */
  readonly pathValues: readonly string[];
  /** A HEAD request answered by a GET route: headers only. */
  readonly head: boolean;
}

function newNode(): Node {
  return { literals: new Map(), param: undefined, methods: new Map() };
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function describeRoute(e: RestEntry): string {
  const md = e.method.descriptor;
  return `${md.http?.method} ${md.http?.path} (${md.serviceName}.${md.propertyKey})`;
}

/**
 * Routes REST requests (`@Get("/users/{id}")` …) to methods. Everything is built at registration:
 * a path without variables is one `Map.get`; templates are a trie of path segments (literal
 * children first, then the variable), walked without regular expressions. Two routes of one HTTP
 * method with the same shape (`/users/{id}` and `/users/{name}`) are a registration error.
 */
export class RestRouter {
  private readonly literalPaths = new Map<string, Node>();
  private readonly root: Node = newNode();
  private count = 0;

  /** Number of REST routes. */
  get size(): number {
    return this.count;
  }

  /** Adds a method's REST mapping (`descriptor.http`), refusing a conflicting one. */
  add(m: RegisteredMethod): void {
    const route = m.descriptor.http;
    if (!route) return;
    const literal = route.segments.every((s) => typeof s === "string");
    let node: Node;
    if (literal) {
      node = this.literalPaths.get(route.path) ?? newNode();
      this.literalPaths.set(route.path, node);
    } else {
      node = this.root;
      for (const s of route.segments) {
        if (typeof s === "string") {
          let next = node.literals.get(s);
          if (!next) node.literals.set(s, (next = newNode()));
          node = next;
        } else {
          node = node.param ??= newNode();
        }
      }
    }
    this.put(node, route.method, { method: m, binder: compileRestBinder(m.descriptor) });
    this.count++;
  }

  /** Removes the REST routes of one registration (a service descriptor as added). */
  removeService(service: RegisteredMethod["service"]): void {
    for (const [path, node] of this.literalPaths) {
      this.count -= dropService(node, service);
      if (node.methods.size === 0) this.literalPaths.delete(path);
    }
    const walk = (node: Node): void => {
      this.count -= dropService(node, service);
      for (const child of node.literals.values()) walk(child);
      if (node.param) walk(node.param);
    };
    walk(this.root);
  }

  private put(node: Node, verb: string, entry: RestEntry): void {
    let v = node.methods.get(verb);
    if (!v) node.methods.set(verb, (v = { plain: undefined, byKey: new Map() }));
    const { version, group } = entry.method.service;
    const key = `${version}\0${group}`;
    const prev = !version && !group ? v.plain : v.byKey.get(key);
    if (prev && prev.method.service !== entry.method.service) {
      throw new TypeError(
        `REST route ${describeRoute(entry)} conflicts with ${describeRoute(prev)}: both answer the same requests; change one path or HTTP method`,
      );
    }
    if (!version && !group) v.plain = entry;
    else v.byKey.set(key, entry);
  }

  /** True when some REST route (for any HTTP method) has this path. */
  serves(path: string): boolean {
    if (this.literalPaths.has(path)) return true;
    const found: { node: Node; values: string[] }[] = [];
    if (this.root.literals.size > 0 || this.root.param) collect(this.root, path.slice(1).split("/"), 0, [], found);
    return found.length > 0;
  }

  /**
   * The REST route for a request, or undefined when no REST path matches (the caller goes on
   * with RPC paths). A path that matches for other HTTP methods only is a 405 listing them in
   * `Allow`. HEAD is answered by a GET route.
   */
  match(verb: string, path: string, headers: HeaderMap): RestMatch | undefined {
    const head = verb === "HEAD";
    const want = head ? "GET" : verb;
    const lit = this.literalPaths.get(path);
    const hit = lit?.methods.get(want);
    if (hit) return this.pick(hit, [], head, headers);
    const found: { node: Node; values: string[] }[] = [];
    if (this.root.literals.size > 0 || this.root.param) collect(this.root, path.slice(1).split("/"), 0, [], found);
    for (const f of found) {
      const v = f.node.methods.get(want);
      if (v) return this.pick(v, f.values, head, headers);
    }
    if (!lit && found.length === 0) return undefined;
    throw notAllowed(verb, path, [lit, ...found.map((f) => f.node)]);
  }

  private pick(v: Variants, pathValues: string[], head: boolean, headers: HeaderMap): RestMatch {
    const version = firstHeader(headers, H.triServiceVersion) ?? "";
    const group = firstHeader(headers, H.triServiceGroup) ?? "";
    const e = !version && !group && v.plain ? v.plain : v.byKey.get(`${version}\0${group}`);
    if (!e) {
      throw new RpcError(Code.Unimplemented, `no implementation with version ${quote(version)} and group ${quote(group)} for this REST route`, {
        httpStatus: 404,
      });
    }
    return { route: e.method, binder: e.binder, pathValues, head };
  }
}

/** Drops a registration's routes ending at `node` (an HTTP method left with none is dropped too); how many went. */
function dropService(node: Node, service: RegisteredMethod["service"]): number {
  let n = 0;
  for (const [verb, v] of node.methods) {
    if (v.plain?.method.service === service) {
      v.plain = undefined;
      n++;
    }
    for (const [k, e] of v.byKey) {
      if (e.method.service !== service) continue;
      v.byKey.delete(k);
      n++;
    }
    if (!v.plain && v.byKey.size === 0) node.methods.delete(verb);
  }
  return n;
}

/** Every node the segments lead to, literal branches before the variable one. */
function collect(node: Node, segs: readonly string[], i: number, values: string[], out: { node: Node; values: string[] }[]): void {
  if (i === segs.length) {
    if (node.methods.size > 0) out.push({ node, values: [...values] });
    return;
  }
  const seg = segs[i];
  const next = node.literals.get(seg) ?? (seg.includes("%") ? node.literals.get(safeDecode(seg) ?? "") : undefined);
  if (next) collect(next, segs, i + 1, values, out);
  if (node.param && seg !== "") {
    values.push(seg);
    collect(node.param, segs, i + 1, values, out);
    values.pop();
  }
}

/** 405 with `Allow`: the path exists for other HTTP methods. */
function notAllowed(verb: string, path: string, nodes: readonly (Node | undefined)[]): RpcError {
  const allow = new Set<string>();
  for (const n of nodes) {
    for (const m of n?.methods.keys() ?? []) {
      allow.add(m);
      if (m === "GET") allow.add("HEAD");
    }
  }
  const list = [...allow].join(", ");
  return new RpcError(Code.Unimplemented, `HTTP method ${cutText(verb)} is not allowed on ${cutText(path)}: use ${list}`, {
    httpStatus: 405,
    legacyStatus: 40,
    metadata: { allow: list },
  });
}
