// Owns `partConverter`. How a part becomes a value of type `t`: byte arrays get the part's bytes
// undecoded (uploaded files), `UploadedFile` also gets the file name and Content-Type. Must not
// change: limits are checked before memory is spent; bad input is a 4xx naming the problem.
import { StreamedFile } from "../service/file-upload.js";
import type { TypeDesc } from "../service/type-desc.js";
import { InMemoryFile } from "../service/type-desc.js";
import { bindError } from "./bind-error.js";
import { compileConverter, compileTextConverter } from "./binder.js";
import { checkCharset, decodeText } from "./charset.js";
import { parseJson } from "./json.js";
import type { ValueConverter } from "./named-binder.js";
import { cutText } from "../protocol/wire-text.js";

/** One part of a multipart/form-data body, read completely (or, for a `StreamedFile`, streamed). */
export interface Part {
  /** `filename` of its Content-Disposition, if it has one. */
  readonly filename: string | undefined;
  /** Lower-case media type of the part (`text/plain` when it has no Content-Type). */
  readonly contentType: string;
  /** The part's `charset` parameter, if any. */
  readonly charset: string | undefined;
  /** The part's bytes (empty for a streamed file: see `upload`). */
  readonly data: Buffer;
  /** A part read as a streamed file (spilled, in memory, or still streaming in). */
  readonly upload?: StreamedFile;
}

function isJson(t: string): boolean {
  return t === "application/json" || t === "text/json" || t.endsWith("+json");
}

/**
 * How a part becomes a value of type `t`: byte arrays get the part's bytes undecoded (uploaded
 * files), `InMemoryFile` also gets the file name and Content-Type; JSON parts are parsed and
 * converted strictly; text parts are decoded in their charset and converted from text; any other
 * (binary) part only binds to a byte array (or to an untyped parameter, as an `InMemoryFile`).
 */
export function partConverter(t: TypeDesc): ValueConverter<Part> {
  if (t.kind === "upload") return (p) => p.upload ?? StreamedFile.fromBytes(p.data, p.filename ?? "", p.contentType);
  if (t.kind === "bytes") return (p) => p.data;
  if (t.kind === "file") return (p) => InMemoryFile.wrap(p.data, p.filename ?? "", p.contentType);
  const strict = compileConverter(t);
  const fromText = compileTextConverter(t);
  return (p, where) => {
    if (isJson(p.contentType)) return strict(parseJson(decodeText(p.data, checkCharset(p.charset))), where);
    if (p.contentType.startsWith("text/")) return fromText(decodeText(p.data, checkCharset(p.charset)), where);
    if (t.kind === "any") return InMemoryFile.wrap(p.data, p.filename ?? "", p.contentType);
    throw bindError(`${where} cannot take a binary part (${cutText(p.contentType)}); declare it as Uint8Array or InMemoryFile`);
  };
}
