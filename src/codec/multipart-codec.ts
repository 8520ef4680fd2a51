// Owns `multipartRequestCodec`. `multipart/form-data`, streamed: each part is decoded by its own
// Content-Type and bound by name (named parameters) or in order (unnamed ones). Must not change:
// limits are checked before memory is spent; bad input is a 4xx naming the problem.
import { PassThrough, type Readable } from "node:stream";
import type { Dicer as DicerClass } from "@fastify/busboy";
import { parseMediaType } from "../protocol/content-type.js";
import { bodyTooLarge, requestBodyClosed } from "../protocol/errors.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { StreamedFile } from "../service/file-upload.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { withNumberLimits } from "./big-numbers.js";
import { parseDisposition } from "./content-disposition.js";
import { decodeError, overLimit } from "./bind-error.js";
import type { BodyLimits, RequestCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";
import { lazyModule } from "./lazy-module.js";
import { type Part, partConverter } from "./multipart-part.js";
import { bindAll } from "./validation.js";
import { compileNamedBinder, type NamedBinder, type NamedValue } from "./named-binder.js";
import { H } from "../protocol/headers.js";
import type { UploadScope } from "./upload-store.js";

/**
 * busboy (~0.5 MiB of live heap) waits for the first multipart request. Only its public entry:
 * the part headers' parameters are read by our own parser (content-disposition.ts).
 */
const loadBusboy = lazyModule(() => ({
  Dicer: (require("@fastify/busboy") as { Dicer: typeof DicerClass }).Dicer,
}));

interface Plan {
  readonly bind: NamedBinder<Part>;
  /** Names of parameters that take bytes: their parts are files even without a `filename`. */
  readonly fileNames: ReadonlySet<string>;
  /** An unnamed parameter takes bytes: any part may be a file. */
  readonly unnamedFile: boolean;
  /** Names of parameters (or fields of the one class parameter) that take a streamed `StreamedFile`. */
  readonly uploadNames: ReadonlySet<string>;
  /** An unnamed parameter takes a `StreamedFile`: any part with a filename is streamed. */
  readonly unnamedUpload: boolean;
  /**
   * The handler may start before the body ends: the last parameter is a single `StreamedFile`,
   * named (`name`) or the method's only parameter (`name` undefined: the first file part).
   */
  readonly live: { readonly name: string | undefined } | undefined;
}

const plans = new WeakMap<MethodDescriptor, Plan>();

function takesBytes(t: TypeDesc): boolean {
  if (t.kind === "array") return takesBytes(t.element);
  return t.kind === "bytes" || t.kind === "file" || t.kind === "upload" || t.kind === "any";
}

function takesUpload(t: TypeDesc): boolean {
  return t.kind === "upload" || (t.kind === "array" && t.element.kind === "upload");
}

function planFor(method: MethodDescriptor): Plan {
  let plan = plans.get(method);
  if (plan) return plan;
  const fileNames = new Set<string>();
  const uploadNames = new Set<string>();
  let unnamedFile = false;
  let unnamedUpload = false;
  const params = method.params;
  for (const p of params) {
    if (p.type.kind === "class" && p.name === undefined && params.length === 1) {
      for (const f of p.type.fields) if (takesUpload(f.type)) uploadNames.add(f.name);
    }
    if (takesUpload(p.type)) {
      if (p.name === undefined) unnamedUpload = true;
      else uploadNames.add(p.name);
    }
    if (!takesBytes(p.type)) continue;
    if (p.name === undefined) unnamedFile = true;
    else fileNames.add(p.name);
  }
  const last = params[params.length - 1];
  const live = last?.type.kind === "upload" && (last.name !== undefined || params.length === 1) ? { name: last.name } : undefined;
  plan = { bind: compileNamedBinder(params, "part", partConverter), fileNames, unnamedFile, uploadNames, unnamedUpload, live };
  plans.set(method, plan);
  return plan;
}

/** True when a method binds streamed files (`StreamedFile`) from multipart. */
function bindsUploads(method: MethodDescriptor): boolean {
  const plan = planFor(method);
  return plan.unnamedUpload || plan.uploadNames.size > 0;
}

interface PartHead {
  readonly name: string;
  readonly filename: string | undefined;
  readonly contentType: string;
  readonly charset: string | undefined;
  /** The part had a Content-Type (without one, a file is `application/octet-stream`). */
  readonly typed: boolean;
  /** The part's place in the body (0-based): parts are bound in this order, whenever each was done. */
  readonly index: number;
}

function parseHead(header: Record<string, string[] | undefined>, index: number): PartHead {
  const cd = header["content-disposition"]?.[0];
  const disposition = cd === undefined ? undefined : parseDisposition(cd);
  if (disposition?.type !== "form-data") {
    throw decodeError(`multipart part #${index + 1} has no "Content-Disposition: form-data" header`);
  }
  const name = disposition.params.get("name");
  const path = disposition.params.get("filename");
  // Only the base name: a client's directory layout is not the server's business (nor a path to trust).
  const filename = path?.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
  if (name === undefined) throw decodeError(`multipart part #${index + 1} has no name in its Content-Disposition`);
  const mt = parseMediaType(header[H.contentType]?.[0]);
  return { name, filename, contentType: mt?.type || "text/plain", charset: mt?.params.charset, typed: !!mt?.type, index };
}

/** How a part is read: a field or a file in memory, a streamed file, or the file the handler streams. */
type PartKind = "field" | "file" | "upload" | "live";

/** Where a part's reader reports: the limits, the call's uploads, the running totals, the outcome. */
interface PartsOwner {
  readonly limits: BodyLimits;
  readonly plan: Plan;
  readonly uploads: UploadScope | undefined;
  /** True once the request failed: readers stop. */
  readonly failed: boolean;
  fail(e: unknown): void;
  done(part: NamedValue<Part>, index: number): void;
  /** Bytes read from the body that are no longer held in memory (spilled or streamed on). */
  movedOut(n: number): void;
  /** The live part (the last parameter's file) is streaming: the handler may start. */
  liveStarted(part: NamedValue<Part>, index: number): void;
}

function classify(head: PartHead, plan: Plan, liveTaken: boolean): PartKind {
  const upload = plan.uploadNames.has(head.name) || (plan.unnamedUpload && head.filename !== undefined);
  if (upload) {
    const live = plan.live;
    if (live && !liveTaken && (live.name === undefined || live.name === head.name)) return "live";
    return "upload";
  }
  const isFile =
    head.filename !== undefined ||
    plan.fileNames.has(head.name) ||
    plan.unnamedFile ||
    !(head.contentType.startsWith("text/") || head.contentType.includes("json"));
  return isFile ? "file" : "field";
}

function partTooLarge(head: PartHead, limit: number, limitName: string) {
  return overLimit(`multipart part "${head.name.slice(0, 64)}" is larger than ${limit} bytes (${limitName})`);
}

/** One part held in memory (a field, a `Uint8Array` / `InMemoryFile` file): its bytes within its limit. */
class MemoryPart {
  private size = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly owner: PartsOwner,
    private readonly head: PartHead,
    private readonly isFile: boolean,
  ) {}

  onData(chunk: Buffer): void {
    this.size += chunk.length;
    const { limits } = this.owner;
    const limit = this.isFile ? limits.maxFileBytes : limits.maxFieldBytes;
    if (this.size > limit) this.owner.fail(partTooLarge(this.head, limit, this.isFile ? "limits.maxFileBytes" : "limits.maxFieldBytes"));
    else this.chunks.push(chunk);
  }

  onEnd(): void {
    const data = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    const { name, filename, contentType, charset } = this.head;
    this.owner.done({ name, value: { filename, contentType, charset, data } }, this.head.index);
  }
}

/**
 * One streamed file (`StreamedFile`): in memory up to `uploadMemoryBytes`, then written to a temp
 * file with backpressure (the part pauses while the disk catches up). Bounded by
 * `maxUploadFileBytes`, the call's `maxUploadBytes` and the server's `maxUploadDiskBytes`.
 */
class SpillPart {
  private size = 0;
  private chunks: Buffer[] = [];
  private file: ReturnType<UploadScope["open"]> | undefined = undefined;

  constructor(
    private readonly owner: PartsOwner,
    private readonly head: PartHead,
    private readonly part: Readable,
    private readonly scope: UploadScope,
  ) {}

  onData(chunk: Buffer): void {
    if (!countUpload(this.owner, this.scope, this.head, (this.size += chunk.length), chunk.length)) return;
    if (!this.file) {
      this.chunks.push(chunk);
      if (this.size <= this.owner.limits.uploadMemoryBytes) return;
      try {
        this.file = this.scope.open();
      } catch (e) {
        // The upload directory cannot be created or written: the call fails, the server stays up.
        this.owner.fail(new RpcError(Code.Internal, `cannot spill an upload to disk (${errorCode(e)})`));
        return;
      }
      this.file.stream.on("error", (e) => this.owner.fail(new RpcError(Code.Internal, `cannot write an upload to disk (${errorCode(e)})`)));
      chunk = Buffer.concat(this.chunks);
      this.chunks = [];
    }
    const refused = this.scope.reserve(chunk.length);
    if (refused) {
      this.owner.fail(refused);
      return;
    }
    this.file.bytes += chunk.length;
    this.owner.movedOut(chunk.length);
    if (!this.file.stream.write(chunk)) {
      this.part.pause();
      this.file.stream.once("drain", () => this.part.resume());
    }
  }

  onEnd(): void {
    const { name, filename, contentType, charset } = this.head;
    const type = fileType(this.head);
    const file = this.file;
    if (!file) {
      const data = Buffer.concat(this.chunks);
      this.owner.done({ name, value: { filename, contentType, charset, data, upload: StreamedFile.fromBytes(data, filename ?? "", type) } }, this.head.index);
      return;
    }
    file.stream.end(() => {
      if (this.owner.failed) return;
      const upload = StreamedFile.fromPath(file.path, this.size, filename ?? "", type);
      // A spilled file is done once flushed, which may come after a later part's: its index keeps its place.
      this.owner.done({ name, value: { filename, contentType, charset, data: EMPTY, upload } }, this.head.index);
    });
  }
}

const EMPTY = Buffer.alloc(0);

/** A file system error's code (`ENOSPC`, `EACCES`), never its message: that names server paths. */
function errorCode(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? "the upload directory cannot be used";
}

/** A streamed file's media type: its part's, or `application/octet-stream` when it has none. */
function fileType(head: PartHead): string {
  return head.typed ? head.contentType : "application/octet-stream";
}

/** Counts a streamed file's bytes against its limits; false (after failing the request) past one. */
function countUpload(owner: PartsOwner, scope: UploadScope, head: PartHead, size: number, n: number): boolean {
  const { limits } = owner;
  if (size > limits.maxUploadFileBytes) {
    owner.fail(partTooLarge(head, limits.maxUploadFileBytes, "uploads.maxFileBytes"));
    return false;
  }
  scope.streamed += n;
  if (scope.streamed > limits.maxUploadBytes) {
    owner.fail(overLimit(`the uploaded files of this request are larger than ${limits.maxUploadBytes} bytes in all (uploads.maxBytes)`));
    return false;
  }
  return true;
}

/**
 * The file the handler reads while it arrives (the last parameter): the part flows into a
 * PassThrough the handler gets as `StreamedFile.stream()`, pausing the body when the handler reads
 * slower than the client sends. A limit crossed or a body cut short fails that stream.
 */
class LivePart {
  // A roomy buffer: fewer pause/resume cycles of the request body (each costs an HTTP/2 window update).
  readonly out = new PassThrough({ highWaterMark: 1024 * 1024 });
  private size = 0;
  readonly upload: StreamedFile;

  constructor(
    private readonly owner: PartsOwner,
    private readonly head: PartHead,
    private readonly part: Readable,
    private readonly scope: UploadScope,
  ) {
    const type = fileType(head);
    this.upload = StreamedFile.fromStream(this.out, head.filename ?? "", type);
    // A handler that never took the stream must not see its failure as an uncaught error.
    this.out.on("error", () => {});
    this.out.on("drain", () => this.part.resume());
    const { name, filename, contentType, charset } = head;
    owner.liveStarted({ name, value: { filename, contentType, charset, data: EMPTY, upload: this.upload } }, head.index);
  }

  onData(chunk: Buffer): void {
    if (!countUpload(this.owner, this.scope, this.head, (this.size += chunk.length), chunk.length)) return;
    this.upload.size = this.size;
    this.owner.movedOut(chunk.length);
    if (!this.out.write(chunk)) this.part.pause();
  }

  onEnd(): void {
    this.out.end();
  }

  abort(e: unknown): void {
    this.out.destroy(e as Error);
  }
}

/**
 * Reads a multipart body as it streams in, part by part, enforcing the limits on the number of
 * parts, files and fields, each part's header block, the size of each file and field, streamed
 * files, and the bytes held in memory (`maxBodyBytes`: every byte read that was not spilled or
 * streamed on, preamble, part headers and boundaries included). Each is checked as the bytes
 * arrive: the request is refused (413, or 507 for a full upload disk) at the first byte past it.
 */
class MultipartReader implements PartsOwner {
  private readonly parts: NamedValue<Part>[] = [];
  private readonly dicer: ReturnType<typeof createDicer>;
  private partCount = 0;
  private files = 0;
  private fields = 0;
  private open = 0;
  private total = 0;
  private moved = 0;
  /** Body bytes read when the current part began, while its headers are awaited. */
  private headerFrom: number | undefined = undefined;
  private finished = false;
  private live: LivePart | undefined = undefined;
  private liveArrived = false;
  private settled = false;
  failed = false;

  constructor(
    private readonly body: Readable,
    boundary: string,
    readonly limits: BodyLimits,
    readonly plan: Plan,
    readonly uploads: UploadScope | undefined,
    private readonly resolve: (parts: NamedValue<Part>[]) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    const dicer = (this.dicer = createDicer(boundary, limits.maxPartHeaderBytes));
    limitHeaderBlocks(dicer, limits.maxPartHeaderBytes, () => this.headerTooLarge());
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
    // Counted before dicer sees the chunk (this listener is added before the pipe's)…
    body.on("data", (chunk: Buffer) => this.count(chunk.length));
    body.pipe(dicer);
    // …and the header block checked after it did.
    body.on("data", () => this.checkHeader());
  }

  private onPart(part: Readable): void {
    part.on("error", (e: Error) => this.fail(decodeError(`malformed multipart body: ${e.message}`, e)));
    const index = this.partCount++;
    if (this.partCount > this.limits.maxParts) {
      part.resume();
      this.fail(overLimit(`the multipart body has more than ${this.limits.maxParts} parts (limits.maxParts)`));
      return;
    }
    this.headerFrom = this.total;
    this.open++;
    let headed = false;
    part.once("header", (h: object) => {
      headed = true;
      this.headerFrom = undefined;
      this.onHeader(part, h as Record<string, string[]>, index);
    });
    part.on("end", () => {
      if (!headed) this.fail(decodeError(`multipart part #${index + 1} has no headers`));
    });
  }

  private onHeader(part: Readable, h: Record<string, string[]>, index: number): void {
    let head: PartHead;
    try {
      head = parseHead(h, index);
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.failed) return;
    if (this.settled) {
      // After the streamed last parameter: nothing binds these parts; they are drained (and counted).
      this.open--;
      part.resume();
      return;
    }
    const kind = classify(head, this.plan, this.liveArrived);
    if (!this.countKind(kind)) return;
    const reader = this.readerFor(kind, head, part);
    if (!reader) return;
    part.on("data", (chunk: Buffer) => this.failed || reader.onData(chunk));
    part.on("end", () => this.failed || reader.onEnd());
  }

  private readerFor(kind: PartKind, head: PartHead, part: Readable): MemoryPart | SpillPart | LivePart | undefined {
    if (kind === "field" || kind === "file") return new MemoryPart(this, head, kind === "file");
    const scope = this.uploads;
    if (!scope) {
      this.fail(new RpcError(Code.Internal, "streamed file parameters (StreamedFile) are not supported on this path"));
      return undefined;
    }
    if (kind === "upload") return new SpillPart(this, head, part, scope);
    this.live = new LivePart(this, head, part, scope);
    return this.live;
  }

  private countKind(kind: PartKind): boolean {
    const { maxFiles, maxFields } = this.limits;
    if (kind === "field" ? ++this.fields > maxFields : ++this.files > maxFiles) {
      this.fail(
        kind === "field"
          ? overLimit(`the multipart body has more than ${maxFields} fields (limits.maxFields)`)
          : overLimit(`the multipart body has more than ${maxFiles} files (limits.maxFiles)`),
      );
      return false;
    }
    return true;
  }

  private count(n: number): void {
    this.total += n;
    // Bytes moved out (spilled, streamed on) are known only after dicer saw them: judge the bytes before this chunk.
    const held = this.total - n - this.moved;
    if (held > this.limits.maxBodyBytes && !this.failed) this.fail(this.heldTooMuch());
  }

  /** Over maxBodyBytes: with streamed files, say what counts (the bytes held in memory). */
  private heldTooMuch() {
    const max = this.limits.maxBodyBytes;
    if (!this.uploads || (this.plan.uploadNames.size === 0 && !this.plan.unnamedUpload)) return bodyTooLarge(max);
    return overLimit(
      `more than ${max} bytes of this multipart body are held in memory (limits.maxBodyBytes): fields, ` +
        `in-memory files and streamed files under uploads.memoryBytes count; larger streamed files are spilled to disk`,
    );
  }

  private checkHeader(): void {
    const from = this.headerFrom;
    if (from !== undefined && this.total - from > this.limits.maxPartHeaderBytes + 256) this.headerTooLarge();
  }

  private headerTooLarge(): void {
    if (this.failed) return;
    this.fail(overLimit(`a multipart part's header block is larger than ${this.limits.maxPartHeaderBytes} bytes (limits.maxPartHeaderBytes)`));
  }

  movedOut(n: number): void {
    this.moved += n;
  }

  liveStarted(part: NamedValue<Part>, index: number): void {
    this.liveArrived = true;
    this.done(part, index);
  }

  /** A part is bound (a spilled file once its temp file is flushed; the live file at its headers), in its place in the body. */
  done(part: NamedValue<Part>, index: number): void {
    this.open--;
    this.parts[index] = part;
    this.maybeDone();
  }

  fail(e: unknown): void {
    if (this.failed) return;
    this.failed = true;
    // Stop parsing but keep draining the body, so the response can still be written.
    this.body.unpipe(this.dicer);
    this.body.resume();
    this.dicer.removeAllListeners("part");
    this.live?.abort(e);
    if (!this.settled) {
      this.settled = true;
      this.reject(e);
    }
  }

  private maybeDone(): void {
    if (this.settled || this.failed || this.open !== 0) return;
    if (this.finished || this.liveArrived) {
      this.settled = true;
      // Parts not bound (over a limit, after the live one) leave holes: filter() skips them.
      this.resolve(this.parts.filter(() => true));
    }
  }
}

function createDicer(boundary: string, maxHeaderBytes: number) {
  return new (loadBusboy().Dicer)({ boundary, maxHeaderPairs: 32, maxHeaderSize: maxHeaderBytes + 256, partHwm: 256 * 1024 } as ConstructorParameters<
    typeof DicerClass
  >[0]);
}

/** What {@link limitHeaderBlocks} reads of busboy's part header parser (not in its typings). */
interface HeaderParserState {
  maxHeaderSize: number;
  maxed: boolean;
  dropped: number;
  buffer: string;
  finished: boolean;
  push(data: Buffer): number | undefined;
  _finish(): void;
}

/**
 * Makes a dicer refuse a part whose header lines exceed `max` bytes, exactly. Its own
 * `maxHeaderSize` only truncates: the rest of the block is dropped without a word and the part
 * goes on (our byte count across body chunks could not see a block that began and ended in one
 * chunk, so blocks up to the chunk size got through). Its header parser receives the boundary
 * line's CRLF, the header lines, then the blank line; told to keep `max + 3` bytes (that CRLF,
 * the lines, one byte more), a block that filled them when it ended is over the limit (the
 * parser trims a CRLFCRLF split across chunks out of what it kept), and one still arriving is as
 * soon as 3 more bytes were dropped (the most a split CRLFCRLF's start accounts for). False when
 * the parser is not shaped as expected (the byte count across chunks then remains the bound).
 */
function limitHeaderBlocks(dicer: object, max: number, tooLarge: () => void): boolean {
  const hp = (dicer as { _hparser?: Partial<HeaderParserState> })._hparser;
  if (!hp || typeof hp.push !== "function" || typeof hp._finish !== "function" || typeof hp.maxHeaderSize !== "number") return false;
  const parser = hp as HeaderParserState;
  const push = parser.push;
  const finish = parser._finish;
  parser.maxHeaderSize = max + 3;
  parser.push = function (this: HeaderParserState, data: Buffer) {
    const r = push.call(this, data);
    if (!this.finished && this.maxed && this.dropped >= 3) tooLarge();
    return r;
  };
  parser._finish = function (this: HeaderParserState) {
    if (this.maxed && this.buffer.length >= this.maxHeaderSize) tooLarge();
    finish.call(this);
  };
  return true;
}

function readParts(body: Readable, boundary: string, limits: BodyLimits, plan: Plan, uploads: UploadScope | undefined) {
  return new Promise<NamedValue<Part>[]>((resolve, reject) => {
    new MultipartReader(body, boundary, limits, plan, uploads, resolve, reject);
  });
}

/**
 * `multipart/form-data`, streamed: each part is decoded by its own Content-Type and bound by
 * name (named parameters) or in order (unnamed ones); byte-array parameters receive file bytes,
 * `StreamedFile` parameters a streamed file (spilled to disk past `uploadMemoryBytes`).
 */
export const multipartRequestCodec: RequestCodec = {
  mediaTypes: ["multipart/form-data"],
  responseMediaType: "application/json",
  streamsFiles: bindsUploads,
  bodyLimit(method, limits) {
    return bindsUploads(method) ? limits.maxBodyBytes + limits.maxUploadBytes : limits.maxBodyBytes;
  },
  async decodeStream(method, body, mediaType, limits, uploads) {
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
    const parts = await readParts(body, boundary, limits, plan, uploads);
    return withNumberLimits(limits, () => bindAll(method, () => plan.bind(parts)));
  },
};
