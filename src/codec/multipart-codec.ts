import type { Readable } from "node:stream";
import type { Dicer as DicerClass } from "@fastify/busboy";
import { parseMediaType } from "../protocol/content-type.js";
import { bodyTooLarge, requestBodyClosed } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { decodeError, overLimit } from "./bind-error.js";
import type { BodyLimits, RequestCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";
import { lazyModule } from "./lazy-module.js";
import { type Part, partConverter } from "./multipart-part.js";
import { compileNamedBinder, type NamedBinder, type NamedValue } from "./named-binder.js";
import { H } from "../protocol/headers.js";

/**
 * busboy (~0.5 MiB of live heap) waits for the first multipart request. Its `parseParams` is the
 * RFC 2231/5987-aware header parameter parser (`filename*=UTF-8''…`), not in its typings.
 */
const loadBusboy = lazyModule(() => ({
  Dicer: (require("@fastify/busboy") as { Dicer: typeof DicerClass }).Dicer,
  parseParams: require("@fastify/busboy/lib/utils/parseParams") as (s: string) => (string | [string, string])[],
}));

interface Plan {
  readonly bind: NamedBinder<Part>;
  /** Names of parameters that take bytes: their parts are files even without a `filename`. */
  readonly fileNames: ReadonlySet<string>;
  /** An unnamed parameter takes bytes: any part may be a file. */
  readonly unnamedFile: boolean;
}

const plans = new WeakMap<MethodDescriptor, Plan>();

function takesBytes(t: TypeDesc): boolean {
  if (t.kind === "array") return takesBytes(t.element);
  return t.kind === "bytes" || t.kind === "file" || t.kind === "any";
}

function planFor(method: MethodDescriptor): Plan {
  let plan = plans.get(method);
  if (!plan) {
    const fileNames = new Set<string>();
    let unnamedFile = false;
    for (const p of method.params) {
      if (!takesBytes(p.type)) continue;
      if (p.name === undefined) unnamedFile = true;
      else fileNames.add(p.name);
    }
    plan = { bind: compileNamedBinder(method.params, "part", partConverter), fileNames, unnamedFile };
    plans.set(method, plan);
  }
  return plan;
}

interface PartHead {
  readonly name: string;
  readonly filename: string | undefined;
  readonly contentType: string;
  readonly charset: string | undefined;
}

function parseHead(header: Record<string, string[] | undefined>, index: number): PartHead {
  const cd = header["content-disposition"]?.[0];
  const params = cd ? loadBusboy().parseParams(cd) : [];
  if (typeof params[0] !== "string" || params[0].toLowerCase() !== "form-data") {
    throw decodeError(`multipart part #${index + 1} has no "Content-Disposition: form-data" header`);
  }
  let name: string | undefined;
  let filename: string | undefined;
  for (const p of params.slice(1)) {
    if (!Array.isArray(p)) continue;
    const k = p[0].toLowerCase();
    if (k === "name") name = p[1];
    // Only the base name: a client's directory layout is not the server's business (nor a path to trust).
    else if (k === "filename") filename = p[1].slice(Math.max(p[1].lastIndexOf("/"), p[1].lastIndexOf("\\")) + 1);
  }
  if (name === undefined) throw decodeError(`multipart part #${index + 1} has no name in its Content-Disposition`);
  const mt = parseMediaType(header[H.contentType]?.[0]);
  return { name, filename, contentType: mt?.type || "text/plain", charset: mt?.params.charset };
}

/** Where a {@link PartReader} reports: the limits, the running total, the outcome. */
interface PartsOwner {
  readonly limits: BodyLimits;
  readonly plan: Plan;
  readonly settled: boolean;
  fail(e: unknown): void;
  done(part: NamedValue<Part>): void;
}

/** One part of a multipart body: its headers, its bytes within its limit, then its value. */
class PartReader {
  private head: PartHead | undefined = undefined;
  private limit = 0;
  private limitName = "";
  private size = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly owner: PartsOwner,
    private readonly index: number,
  ) {}

  onHeader(h: Record<string, string[]>): void {
    try {
      this.head = parseHead(h, this.index);
    } catch (e) {
      this.owner.fail(e);
      return;
    }
    const { plan, limits } = this.owner;
    const head = this.head;
    const isFile =
      head.filename !== undefined ||
      plan.fileNames.has(head.name) ||
      plan.unnamedFile ||
      !(head.contentType.startsWith("text/") || head.contentType.includes("json"));
    this.limit = isFile ? limits.maxFileBytes : limits.maxFieldBytes;
    this.limitName = isFile ? "maxFileBytes" : "maxFieldBytes";
  }

  onData(chunk: Buffer): void {
    const head = this.head;
    if (this.owner.settled || !head) return;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.owner.fail(overLimit(`multipart part "${head.name.slice(0, 64)}" is larger than ${this.limit} bytes (limits.${this.limitName})`));
      return;
    }
    this.chunks.push(chunk);
  }

  onEnd(): void {
    const head = this.head;
    if (this.owner.settled) return;
    if (!head) {
      this.owner.fail(decodeError(`multipart part #${this.index + 1} has no headers`));
      return;
    }
    const data = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    const { name, filename, contentType, charset } = head;
    this.owner.done({ name, value: { filename, contentType, charset, data } });
  }
}

/**
 * Reads a multipart body as it streams in, part by part, enforcing the limits on the number of
 * parts, the size of each file and field, and the whole body (413 when one is exceeded). Every
 * byte read counts against `maxBodyBytes`, preamble, part headers and boundaries included: a body
 * that never reaches its first boundary is refused at the first byte past the limit.
 */
class MultipartReader implements PartsOwner {
  private readonly parts: NamedValue<Part>[] = [];
  private readonly dicer: ReturnType<typeof createDicer>;
  private partCount = 0;
  private open = 0;
  private total = 0;
  private finished = false;
  settled = false;

  constructor(
    private readonly body: Readable,
    boundary: string,
    readonly limits: BodyLimits,
    readonly plan: Plan,
    private readonly resolve: (parts: NamedValue<Part>[]) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    const dicer = (this.dicer = createDicer(boundary));
    dicer.on("part", (part: Readable) => this.onPart(part));
    dicer.on("error", (e: Error) => this.fail(decodeError(`malformed multipart body: ${e.message}`, e)));
    dicer.on("finish", () => {
      this.finished = true;
      this.maybeDone();
    });
    // A limit's own error (the body reader's, or a decompressor's) is passed on as it is.
    body.on("error", (e: Error) => this.fail(e instanceof RpcError ? e : decodeError(`cannot read the request body: ${e.message}`, e)));
    body.on("close", () => {
      if (!body.readableEnded) this.fail(requestBodyClosed());
    });
    // Counted before dicer sees the chunk (this listener is added before the pipe's).
    body.on("data", (chunk: Buffer) => this.count(chunk.length));
    body.pipe(dicer);
  }

  private onPart(part: Readable): void {
    part.on("error", (e: Error) => this.fail(decodeError(`malformed multipart body: ${e.message}`, e)));
    const index = this.partCount++;
    if (this.partCount > this.limits.maxParts) {
      part.resume();
      this.fail(overLimit(`the multipart body has more than ${this.limits.maxParts} parts (limits.maxParts)`));
      return;
    }
    this.open++;
    const reader = new PartReader(this, index);
    part.on("header", (h: object) => reader.onHeader(h as Record<string, string[]>));
    part.on("data", (chunk: Buffer) => reader.onData(chunk));
    part.on("end", () => {
      this.open--;
      reader.onEnd();
    });
  }

  private count(n: number): void {
    this.total += n;
    if (this.total > this.limits.maxBodyBytes && !this.settled) this.fail(bodyTooLarge(this.limits.maxBodyBytes));
  }

  done(part: NamedValue<Part>): void {
    this.parts.push(part);
    this.maybeDone();
  }

  fail(e: unknown): void {
    if (this.settled) return;
    this.settled = true;
    // Stop parsing but keep draining the body, so the response can still be written.
    this.body.unpipe(this.dicer);
    this.body.resume();
    this.dicer.removeAllListeners("part");
    this.reject(e);
  }

  private maybeDone(): void {
    if (!this.settled && this.finished && this.open === 0) {
      this.settled = true;
      this.resolve(this.parts);
    }
  }
}

function createDicer(boundary: string) {
  return new (loadBusboy().Dicer)({ boundary, maxHeaderPairs: 32 });
}

function readParts(body: Readable, boundary: string, limits: BodyLimits, plan: Plan): Promise<NamedValue<Part>[]> {
  return new Promise((resolve, reject) => {
    new MultipartReader(body, boundary, limits, plan, resolve, reject);
  });
}

/**
 * `multipart/form-data`, streamed: each part is decoded by its own Content-Type and bound by
 * name (named parameters) or in order (unnamed ones); byte-array parameters receive file bytes.
 */
export const multipartRequestCodec: RequestCodec = {
  mediaTypes: ["multipart/form-data"],
  responseMediaType: "application/json",
  async decodeStream(method, body, mediaType, limits) {
    const boundary = mediaType.params.boundary;
    try {
      requireIdlLess(method, mediaType.type);
      if (!boundary || boundary.length > 200) {
        throw decodeError("multipart/form-data needs a boundary parameter (Content-Type: multipart/form-data; boundary=…)");
      }
    } catch (e) {
      // Nobody will read this body: let it flow away instead of piling up in the pipe.
      body.resume();
      throw e;
    }
    const plan = planFor(method);
    const parts = await readParts(body, boundary, limits, plan);
    return plan.bind(parts);
  },
};
