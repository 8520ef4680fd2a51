import type { Readable } from "node:stream";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";

/** 413 / resource_exhausted for a body over the limit. */
export function bodyTooLarge(limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `request body larger than ${limit} bytes`, { httpStatus: 413 });
}

/**
 * Reads a whole request body, at most `limit` bytes, and calls back once. Callback style keeps
 * the unary path free of promise hops; one-chunk bodies (the common case) are not copied.
 */
export function collectBody(body: Readable, limit: number, cb: (err: RpcError | undefined, data: Buffer) => void): void {
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
      finish(bodyTooLarge(limit), Buffer.alloc(0));
      return;
    }
    if (first === undefined) first = chunk;
    else (chunks ??= [first]).push(chunk);
  };
  const onEnd = () => finish(undefined, chunks ? Buffer.concat(chunks, size) : (first ?? Buffer.alloc(0)));
  const onError = (e: Error) => finish(new RpcError(Code.Cancelled, `request body failed: ${e.message}`), Buffer.alloc(0));
  const onClose = () => finish(new RpcError(Code.Cancelled, "the client closed the request before its body ended"), Buffer.alloc(0));
  body.on("data", onData);
  body.on("end", onEnd);
  body.on("error", onError);
  body.on("close", onClose);
}
