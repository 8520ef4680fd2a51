import { randomBytes } from "node:crypto";
import type { OutgoingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { firstHeader, H } from "../protocol/headers.js";
import type { WireSettings } from "../runtime/client-protocol.js";
import type { Attempt } from "../runtime/invocation.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { Download } from "../service/download.js";
import { FileUpload } from "../service/file-upload.js";
import type { CallScope } from "../transport/client/call-scope.js";
import type { HttpReply } from "../transport/client/unary-transport.js";

function isBlob(x: unknown): x is Blob {
  return typeof Blob !== "undefined" && x instanceof Blob;
}

/** An argument that travels as a multipart file: a `File`/`Blob`, a Node.js `Readable`, a `FileUpload`. */
export function isFileArg(x: unknown): boolean {
  return isBlob(x) || x instanceof Readable || x instanceof FileUpload;
}

async function bytesOf(x: Blob | Readable | FileUpload): Promise<Buffer> {
  if (isBlob(x)) return Buffer.from(await x.arrayBuffer());
  if (x instanceof FileUpload) return Buffer.from(await x.bytes());
  const chunks: Buffer[] = [];
  for await (const c of x) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

function quoted(s: string): string {
  return s.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c));
}

/**
 * The arguments of a call as a `multipart/form-data` body: file arguments as file parts
 * (`File` names and types kept), the others as JSON parts. Each part is named after its
 * parameter (`@Param("name")`), or `arg<i>` for unnamed ones, which the server binds in order.
 */
export async function multipartArgs(md: MethodDescriptor, args: readonly unknown[]): Promise<{ body: Buffer; contentType: string }> {
  const boundary = `----triple${randomBytes(12).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === undefined) continue;
    const name = quoted(md.params[i]?.name ?? `arg${i}`);
    if (isFileArg(a)) {
      const f = a as Blob | Readable | FileUpload;
      const filename = f instanceof FileUpload ? f.filename : typeof (f as File).name === "string" ? (f as File).name : "blob";
      const type = (f instanceof FileUpload ? f.contentType : isBlob(f) ? f.type : "") || "application/octet-stream";
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${quoted(filename)}"\r\nContent-Type: ${type}\r\n\r\n`));
      chunks.push(await bytesOf(f), Buffer.from("\r\n"));
    } else {
      const json = JSON.stringify(a, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${json}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The file name of a `Content-Disposition` header: `filename*` (RFC 5987 UTF-8) first, then `filename`. */
export function dispositionFilename(cd: string): string | undefined {
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(cd);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {}
  }
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"|filename\s*=\s*([^;\s]+)/i.exec(cd);
  return plain ? (plain[1] ?? plain[2]) : undefined;
}

/** The reply as a {@link Download} when it is a file (a 200 with `Content-Disposition`); undefined otherwise. */
export function downloadOfReply(reply: HttpReply): Download | undefined {
  const cd = firstHeader(reply.headers, "content-disposition");
  if (reply.status !== 200 || cd === undefined) return undefined;
  const type = firstHeader(reply.headers, H.contentType);
  return new Download(reply.body, { filename: dispositionFilename(cd), type, size: reply.body.length, inline: cd.trim().toLowerCase().startsWith("inline") });
}

/**
 * The attempt of a call with file arguments: the arguments as a multipart body (encoded once),
 * then `read` for the reply. The transports add the path (and HTTP/2's pseudo-headers).
 */
export function multipartAttempt(
  md: MethodDescriptor,
  settings: WireSettings,
  args: readonly unknown[],
  callHeaders: OutgoingHttpHeaders,
  scope: CallScope,
  read: (reply: HttpReply) => unknown,
): Attempt<unknown> {
  const encoded = multipartArgs(md, args);
  const transport = settings.unary();
  const { path } = md;
  return (p) =>
    encoded.then(({ body, contentType }) => {
      const headers: OutgoingHttpHeaders = { ...callHeaders, [H.contentType]: contentType };
      delete headers[":path"];
      delete headers[":method"];
      const ms = scope.remaining();
      if (ms !== undefined) headers[H.triServiceTimeout] = String(ms);
      return transport.post(p, { path, headers, body, signal: scope.signal, maxBytes: settings.maxBytes }).then(read);
    });
}
