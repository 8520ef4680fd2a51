import type { Readable } from "node:stream";
import { Code } from "../protocol/code.js";
import { bodyTooLarge, requestBodyClosed } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";

const EMPTY = Buffer.alloc(0);

/** Receives a whole request body (or why there is none) from {@link collectBody}. */
export type BodyCallback = (err: RpcError | undefined, data: Buffer) => void;

/**
 * Reads a whole request body, at most `limit` bytes, and calls back once. Callback style keeps
 * the unary path free of promise hops; one-chunk bodies (the common case) are not copied.
 */
export function collectBody(body: Readable, limit: number, cb: BodyCallback): void {
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let size = 0;
  let done = false;
  const finish = (err: RpcError | undefined, data: Buffer) => {
    if (done) return;
    done = true;
    body.removeListener("data", onData);
    body.removeListener("end", onEnd);
    body.removeListener("error", onError);
    body.removeListener("close", onClose);
    cb(err, data);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      body.pause();
      finish(bodyTooLarge(limit), EMPTY);
      return;
    }
    if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
  };
  const onEnd = () => finish(undefined, chunks ? Buffer.concat(chunks, size) : (first ?? EMPTY));
  const onError = (e: Error) => finish(new RpcError(Code.Cancelled, `request body failed: ${e.message}`), EMPTY);
  const onClose = () => finish(requestBodyClosed(), EMPTY);
  body.on("data", onData);
  body.on("end", onEnd);
  body.on("error", onError);
  body.on("close", onClose);
}
