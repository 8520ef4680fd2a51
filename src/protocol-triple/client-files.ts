// Owns `isFileArg`, `dispositionFilename`, `downloadOfReply`, `multipartAttempt`, … An argument
// that travels as a multipart file: a `File`/`Blob`, a Node.js `Readable`, a `FileUpload`. Must not
// change: Triple's wire rules as Dubbo Java speaks them (tri-* headers, the HTTP unary and stream
// forms).
import { randomBytes } from "node:crypto";
import type { OutgoingHttpHeaders } from "node:http";
import * as http from "node:http";
import * as https from "node:https";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Code } from "../protocol/code.js";
import { responseTooLarge } from "../protocol/errors.js";
import { firstHeader, H, type HeaderMap } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { WireSettings } from "../runtime/client-protocol.js";
import type { Attempt } from "../runtime/invocation.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { Download } from "../service/download.js";
import { StreamedFile } from "../service/file-upload.js";
import type { CallScope } from "../transport/client/call-scope.js";
import { connectFailure, isConnectErrorCode, streamClosedError, streamError, transportError } from "../transport/client/errors.js";
import { whenConnected } from "../transport/client/http1.js";
import type { Provider } from "../transport/client/provider.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import { memoryConnection } from "../transport/memory.js";

function isBlob(x: unknown): x is Blob {
  return typeof Blob !== "undefined" && x instanceof Blob;
}

/** An argument that travels as a multipart file: a `File`/`Blob`, a Node.js `Readable`, a `StreamedFile`. */
export function isFileArg(x: unknown): boolean {
  return isBlob(x) || x instanceof Readable || x instanceof StreamedFile;
}

function quoted(s: string): string {
  return s.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c));
}

/**
 * The file name of a `Content-Disposition` header: `filename*` (RFC 5987 UTF-8) first, then
 * `filename`; only its last path segment (RFC 6266 §4.3: a recipient strips path information, so
 * a server's `../../.bashrc` is `.bashrc`), without control characters; none when nothing is left.
 */
function dispositionFilename(cd: string): string | undefined {
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(cd);
  if (star) {
    try {
      return baseName(decodeURIComponent(star[1].trim()));
    } catch {}
  }
  const plain = /filename\s*=\s*"((?:[^"\\]|\\.)*)"|filename\s*=\s*([^;\s]+)/i.exec(cd);
  return plain ? baseName(plain[1] !== undefined ? plain[1].replace(/\\(.)/g, "$1") : plain[2]) : undefined;
}

function baseName(name: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1).replace(/[\u0000-\u001f\u007f]/g, "");
  return base === "" || base === "." || base === ".." ? undefined : base;
}

/** The reply as a {@link Download} when it is a file (a 200 with `Content-Disposition`); undefined otherwise. */
export function downloadOfReply(reply: HttpReply): Download | undefined {
  const cd = firstHeader(reply.headers, "content-disposition");
  if (reply.status !== 200 || cd === undefined) return undefined;
  const type = firstHeader(reply.headers, H.contentType);
  return new Download(reply.body, { filename: dispositionFilename(cd), type, size: reply.body.length, inline: cd.trim().toLowerCase().startsWith("inline") });
}

/** A file argument as a Node.js Readable: streamed, never held whole. */
function streamOf(x: Blob | Readable | StreamedFile): Readable {
  if (isBlob(x)) return Readable.fromWeb(x.stream() as import("node:stream/web").ReadableStream<Uint8Array>);
  if (x instanceof StreamedFile) return x.stream();
  return x;
}

/** The most a file argument's chunk goes out as at once over HTTP/2 (with backpressure between). */
const H2_SLICE = 1024 * 1024;

/** The multipart body of a call, generated as it is sent: file arguments stream through. */
async function* multipartBody(md: MethodDescriptor, args: readonly unknown[], boundary: string, sources: Readable[], slice: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === undefined) continue;
    const name = quoted(md.params[i]?.name ?? `arg${i}`);
    if (!isFileArg(a)) {
      const json = JSON.stringify(a, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${json}\r\n`);
      continue;
    }
    const f = a as Blob | Readable | StreamedFile;
    const filename = f instanceof StreamedFile ? f.filename : typeof (f as File).name === "string" ? (f as File).name : "blob";
    const type = (f instanceof StreamedFile ? f.contentType : isBlob(f) ? f.type : "") || "application/octet-stream";
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${quoted(filename)}"\r\nContent-Type: ${type}\r\n\r\n`);
    const source = streamOf(f);
    sources.push(source);
    for await (const c of source) {
      const b = Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array);
      // In slices: a Blob's stream is one chunk of its whole size, and an HTTP/2 stream buffering
      // more than the session's memory (10 MiB) makes node drop the response's HEADERS.
      if (b.length <= slice) yield b;
      else for (let at = 0; at < b.length; at += slice) yield b.subarray(at, at + slice);
    }
    yield Buffer.from("\r\n");
  }
  yield Buffer.from(`--${boundary}--\r\n`);
}

/** True when an argument can be sent once only (a stream), so the call cannot be retried. */
function oneShot(x: unknown): boolean {
  return x instanceof Readable || (x instanceof StreamedFile && x.streaming);
}

/**
 * What an attempt does with a response as it arrives: a file reply (200 with
 * `Content-Disposition`) resolves at once to a {@link Download} over the live body; any other is
 * collected (at most `maxBytes`) and handed to `read`. A body cut short (the connection closed or
 * reset) goes to `fail`; one still arriving when `signal` aborts (the deadline, the caller's
 * signal) is dropped and the call rejects with the signal's reason.
 */
function settleResponse(
  status: number,
  headers: HeaderMap,
  body: Readable,
  maxBytes: number,
  signal: AbortSignal,
  read: (reply: HttpReply) => unknown,
  resolve: (v: unknown) => void,
  reject: (e: unknown) => void,
  fail: (e: Error) => void,
): void {
  const cd = firstHeader(headers, "content-disposition");
  if (status === 200 && cd !== undefined) {
    const length = firstHeader(headers, H.contentLength);
    const type = firstHeader(headers, H.contentType);
    const size = length === undefined ? undefined : Number(length);
    resolve(new Download(body, { filename: dispositionFilename(cd), type, size, inline: cd.trim().toLowerCase().startsWith("inline") }));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  const onAbort = () => {
    body.destroy();
    reject(signal.reason);
  };
  if (signal.aborted) {
    onAbort();
    return;
  }
  signal.addEventListener("abort", onAbort, { once: true });
  body.on("data", (c: Buffer) => {
    size += c.length;
    if (size > maxBytes) {
      body.destroy();
      reject(responseTooLarge(maxBytes));
    } else chunks.push(c);
  });
  body.on("end", () => {
    ended = true;
    signal.removeEventListener("abort", onAbort);
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    try {
      resolve(read({ status, headers, body: Buffer.concat(chunks) }));
    } catch (e) {
      reject(e);
    }
  });
  body.on("error", fail);
  body.on("close", () => {
    signal.removeEventListener("abort", onAbort);
    if (!ended) fail(new Error("the connection closed before the response was complete"));
  });
}

/**
 * The attempt of a call with file arguments: the arguments stream out as multipart/form-data
 * (file arguments read as they are sent, with backpressure), and a file reply streams in as a
 * {@link Download}. One connection of its own over HTTP/1.1 and HTTPS/1.1 (a pooled HTTP/2
 * session over h2).
 * A call with a stream argument is sent once: it is not retried on another provider.
 */
export function multipartAttempt(
  md: MethodDescriptor,
  settings: WireSettings,
  args: readonly unknown[],
  callHeaders: OutgoingHttpHeaders,
  scope: CallScope,
  read: (reply: HttpReply) => unknown,
): Attempt<unknown> {
  let sent = false;
  const once = args.some(oneShot);
  return (p) => {
    if (sent && once)
      return Promise.reject(new RpcError(Code.Unavailable, `${md.path}: a call with a stream argument cannot be retried (the stream was read)`));
    sent = true;
    const boundary = `----triple${randomBytes(12).toString("hex")}`;
    const headers: OutgoingHttpHeaders = { ...callHeaders, [H.contentType]: `multipart/form-data; boundary=${boundary}` };
    delete headers[":path"];
    delete headers[":method"];
    const ms = scope.remaining();
    if (ms !== undefined) headers[H.triServiceTimeout] = String(ms);
    // A call that ends early (an answer, the deadline, a broken connection) frees the file it was
    // reading even while that source is waiting for data (the generator cannot return then).
    const sources: Readable[] = [];
    const body = Readable.from(multipartBody(md, args, boundary, sources, settings.httpVersion === "1.1" ? Number.POSITIVE_INFINITY : H2_SLICE));
    const destroyBody = body._destroy.bind(body);
    body._destroy = (err, cb) => {
      for (const s of sources) if (!s.readableEnded) s.destroy();
      destroyBody(err, cb);
    };
    return postStreaming(settings, p, md.path, headers, body, scope, read);
  };
}

/**
 * The attempt of a call whose method returns a file (`@Method({ returns: Download })`): the
 * encoded arguments go as they are, and the reply streams in as a {@link Download} (any other
 * reply is read as usual), unbounded by `maxResponseBytes`.
 */
export function downloadAttempt(
  md: MethodDescriptor,
  settings: WireSettings,
  body: Uint8Array,
  callHeaders: OutgoingHttpHeaders,
  scope: CallScope,
  read: (reply: HttpReply) => unknown,
): Attempt<unknown> {
  return (p) => {
    const headers: OutgoingHttpHeaders = { ...callHeaders };
    delete headers[":path"];
    delete headers[":method"];
    const ms = scope.remaining();
    if (ms !== undefined) headers[H.triServiceTimeout] = String(ms);
    return postStreaming(
      settings,
      p,
      md.path,
      headers,
      Readable.from([Buffer.from(body.buffer, body.byteOffset, body.byteLength)], { objectMode: false }),
      scope,
      read,
    );
  };
}

function postStreaming(
  settings: WireSettings,
  p: Provider,
  path: string,
  headers: OutgoingHttpHeaders,
  body: Readable,
  scope: CallScope,
  read: (reply: HttpReply) => unknown,
) {
  return settings.httpVersion === "1.1" ? post1(settings, p, path, headers, body, scope, read) : post2(settings, p, path, headers, body, scope, read);
}

/** One POST on a connection of its own (TLS with the client's options for an `https://` provider). */
function post1(
  settings: WireSettings,
  p: Provider,
  path: string,
  headers: OutgoingHttpHeaders,
  body: Readable,
  scope: CallScope,
  read: (reply: HttpReply) => unknown,
) {
  return new Promise<unknown>((resolve, reject) => {
    const signal = scope.signal;
    // Once connected, bytes of the request may have reached a handler: the error says so, and the
    // call is retried elsewhere only for an idempotent method (as every other call).
    let connected = false;
    const fail = (e: Error) =>
      reject(signal.aborted ? signal.reason : !connected && isConnectErrorCode(e) ? connectFailure(p.address, e) : transportError(p.address, e, connected));
    const host = p.host.startsWith("[") ? p.host.slice(1, -1) : p.host;
    const target: http.RequestOptions = { host, port: p.port, path, method: "POST", headers, agent: false };
    // An in-process server (memory://, createTestClient): an in-memory connection of its own.
    if (p.memory) {
      target.agent = undefined;
      target.createConnection = () => memoryConnection(p.host, "1.1") as unknown as Socket;
    }
    const req = p.secure ? https.request({ ...settings.tls, ...target }) : http.request(target);
    req.on("socket", (sock: Socket) =>
      whenConnected(sock, p.secure, () => {
        connected = true;
      }),
    );
    const onAbort = () => req.destroy(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("response", (res) => {
      signal.removeEventListener("abort", onAbort);
      settleResponse(res.statusCode ?? 0, res.headers, res, settings.maxBytes, signal, read, resolve, reject, fail);
    });
    req.on("error", fail);
    pipeline(body, req).catch(fail);
  });
}

async function post2(
  settings: WireSettings,
  p: Provider,
  path: string,
  headers: OutgoingHttpHeaders,
  body: Readable,
  scope: CallScope,
  read: (reply: HttpReply) => unknown,
) {
  const stream = await settings.http2().open(p, { ...headers, ":method": "POST", ":path": path }, scope.signal);
  return new Promise<unknown>((resolve, reject) => {
    // A broken stream may have reached a handler unless provably unprocessed (as every other call).
    const fail = (e: Error) => reject(scope.signal.aborted ? scope.signal.reason : streamError(p, stream, e));
    let responded = false;
    // The server may answer (413 past a limit, 507, a bad argument) and end its side or reset the
    // stream before it has read the whole body: writing then stops (the source is freed) and the
    // answer that arrived decides the call. (A pipeline would destroy the stream on the early
    // close and lose that answer.)
    const stopWriting = () => {
      body.unpipe(stream);
      body.destroy();
    };
    stream.on("response", (h) => {
      responded = true;
      settleResponse(Number(h[":status"]), h as HeaderMap, stream, settings.maxBytes, scope.signal, read, resolve, reject, fail);
    });
    stream.on("error", fail);
    // The server ended the stream first: once what it answered has been read, the stream is
    // freed (node keeps it open while writes are queued, and the call would wait for nothing).
    stream.on("aborted", () => {
      stopWriting();
      const free = () => process.nextTick(() => stream.destroy());
      if (stream.readableEnded) free();
      else {
        stream.once("end", free);
        if (!responded) stream.resume(); // nothing reads a stream without a response
      }
    });
    // The deadline or the caller's signal: the pool resets the stream, which may already be closed.
    const onAbort = () => stream.destroy();
    scope.signal.addEventListener("abort", onAbort, { once: true });
    stream.on("close", () => {
      scope.signal.removeEventListener("abort", onAbort);
      stopWriting();
      if (stream.rstCode !== undefined && stream.rstCode !== 0) reject(scope.signal.aborted ? scope.signal.reason : streamClosedError(p, stream));
      else if (!responded) fail(new Error("the stream closed before a response arrived"));
    });
    // A source that fails (a file that cannot be read) fails the call and resets the stream.
    body.on("error", (e) => {
      fail(e);
      stream.destroy(e);
    });
    body.pipe(stream);
  });
}
