import type { Readable } from "node:stream";
import type { Dicer as DicerClass } from "@fastify/busboy";
import { Code } from "../protocol/code.js";
import { parseMediaType } from "../protocol/content-type.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { decodeError } from "./bind-error.js";
import type { BodyLimits, RequestCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";
import { lazyModule } from "./lazy-module.js";
import { type Part, partConverter } from "./multipart-part.js";
import { compileNamedBinder, type NamedBinder, type NamedValue } from "./named-binder.js";

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

function tooLarge(message: string): RpcError {
  return new RpcError(Code.ResourceExhausted, message, { httpStatus: 413 });
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
  const mt = parseMediaType(header["content-type"]?.[0]);
  return { name, filename, contentType: mt?.type || "text/plain", charset: mt?.params.charset };
}

/**
 * Reads a multipart body as it streams in, part by part, enforcing the limits on the number of
 * parts, the size of each file and field, and the whole body (413 when one is exceeded).
 */
function readParts(body: Readable, boundary: string, limits: BodyLimits, plan: Plan): Promise<NamedValue<Part>[]> {
  return new Promise((resolve, reject) => {
    const parts: NamedValue<Part>[] = [];
    const dicer = new (loadBusboy().Dicer)({ boundary, maxHeaderPairs: 32 });
    let count = 0;
    let open = 0;
    let total = 0;
    let finished = false;
    let settled = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      // Stop parsing but keep draining the body, so the response can still be written.
      body.unpipe(dicer);
      body.resume();
      dicer.removeAllListeners("part");
      reject(e);
    };
    const maybeDone = () => {
      if (!settled && finished && open === 0) {
        settled = true;
        resolve(parts);
      }
    };
    dicer.on("part", (part) => {
      part.on("error", (e: Error) => fail(decodeError(`malformed multipart body: ${e.message}`, e)));
      const index = count++;
      if (count > limits.maxParts) {
        part.resume();
        fail(tooLarge(`the multipart body has more than ${limits.maxParts} parts`));
        return;
      }
      open++;
      let head: PartHead | undefined;
      let limit = 0;
      let size = 0;
      const chunks: Buffer[] = [];
      part.on("header", (h: object) => {
        try {
          head = parseHead(h as Record<string, string[]>, index);
        } catch (e) {
          fail(e);
          return;
        }
        const isFile =
          head.filename !== undefined ||
          plan.fileNames.has(head.name) ||
          plan.unnamedFile ||
          !(head.contentType.startsWith("text/") || head.contentType.includes("json"));
        limit = isFile ? limits.maxFileBytes : limits.maxFieldBytes;
      });
      part.on("data", (chunk: Buffer) => {
        if (settled || !head) return;
        size += chunk.length;
        total += chunk.length;
        if (size > limit) {
          fail(tooLarge(`multipart part "${head.name.slice(0, 64)}" is larger than ${limit} bytes`));
          return;
        }
        if (total > limits.maxBodyBytes) {
          fail(tooLarge(`request body larger than ${limits.maxBodyBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      part.on("end", () => {
        open--;
        if (settled) return;
        if (!head) {
          fail(decodeError(`multipart part #${index + 1} has no headers`));
          return;
        }
        const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
        parts.push({
          name: head.name,
          value: { filename: head.filename, contentType: head.contentType, charset: head.charset, data },
        });
        maybeDone();
      });
    });
    dicer.on("error", (e: Error) => fail(decodeError(`malformed multipart body: ${e.message}`, e)));
    dicer.on("finish", () => {
      finished = true;
      maybeDone();
    });
    body.on("error", (e: Error) => fail(decodeError(`cannot read the request body: ${e.message}`, e)));
    body.on("close", () => {
      if (!body.readableEnded) fail(new RpcError(Code.Cancelled, "the client closed the request before its body ended"));
    });
    body.pipe(dicer);
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
