import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, readdirSync, unlink, unlinkSync, type WriteStream } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";

/** Temp file names: `triple-upload-<pid>-<24 hex>`; the pid lets a restart find a crashed process's leftovers. */
const NAME = /^triple-upload-(\d+)-[0-9a-f]{24}$/;

/** Every temp file of this process not yet deleted, removed synchronously if the process exits first. */
const live = new Set<string>();
let exitHook = false;

function removeAllOnExit(): void {
  for (const p of live) {
    try {
      unlinkSync(p);
    } catch {}
  }
  live.clear();
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The default spill directory: `<os tmpdir>/triple-rpc-uploads-<uid>` (per user, mode 0700). */
export function defaultUploadDir(): string {
  let uid = "";
  try {
    uid = `-${userInfo().uid}`;
  } catch {}
  return join(tmpdir(), `triple-rpc-uploads${uid}`);
}

/** Disk full for uploads (the server-wide `maxUploadDiskBytes`): 507, resource_exhausted. */
export function uploadDiskFull(limit: number): RpcError {
  return new RpcError(
    Code.ResourceExhausted,
    `the server's upload space is full: spilled uploads would exceed ${limit} bytes on disk (limits.maxUploadDiskBytes); retry later`,
    { httpStatus: 507 },
  );
}

/**
 * Where uploaded files past the memory threshold are spilled: one directory, a server-wide bound
 * on the bytes on disk, and every file deleted by the call that made it (see {@link UploadScope}),
 * at process exit, and at start-up for the leftovers of a process that crashed.
 */
export class UploadStore {
  /** Bytes of spilled uploads currently on disk. */
  used = 0;
  private ready = false;

  constructor(
    readonly dir: string,
    readonly maxDiskBytes: number,
  ) {}

  /**
   * Creates the directory (0700) if needed and deletes temp files left by processes that no
   * longer run (a crash skips every cleanup). Files of running processes are left alone, so
   * servers may share a directory.
   */
  sweep(): number {
    this.prepare();
    let removed = 0;
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const n of names) {
      const m = NAME.exec(n);
      if (!m || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
      try {
        unlinkSync(join(this.dir, n));
        removed++;
      } catch {}
    }
    return removed;
  }

  private prepare(): void {
    if (this.ready) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.ready = true;
    if (!exitHook) {
      exitHook = true;
      process.once("exit", removeAllOnExit);
    }
  }

  /** Reserves `n` more bytes on disk, or false when that would cross `maxDiskBytes`. */
  reserve(n: number): boolean {
    if (this.used + n > this.maxDiskBytes) return false;
    this.used += n;
    return true;
  }

  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }

  /** A new temp file, created exclusively with mode 0600 under an unguessable name. */
  create(): { path: string; stream: WriteStream } {
    this.prepare();
    const path = join(this.dir, `triple-upload-${process.pid}-${randomBytes(12).toString("hex")}`);
    live.add(path);
    // A large buffer: fewer pause/resume cycles of the request body (each costs an HTTP/2 window update).
    return { path, stream: createWriteStream(path, { flags: "wx", mode: 0o600, highWaterMark: 1024 * 1024 }) };
  }

  /** Deletes a temp file (once its stream closed) and gives back its reserved bytes. */
  remove(path: string, bytes: number): void {
    this.release(bytes);
    unlink(path, () => live.delete(path));
  }
}

/** One temp file of a call: its stream while written, and the bytes reserved for it. */
interface SpillFile {
  readonly path: string;
  readonly stream: WriteStream;
  bytes: number;
}

/**
 * The uploads of one call: counts its streamed bytes (the per-call `maxUploadBytes`) and owns its
 * temp files; `release()` (the call ended: success, error, cancellation, deadline, shutdown)
 * stops any write and deletes them all. Idempotent.
 */
export class UploadScope {
  /** Bytes of files streamed in this call (to disk, or to the handler). */
  streamed = 0;
  private files: SpillFile[] = [];
  released = false;

  constructor(readonly store: UploadStore) {}

  /** A new temp file for this call (an already released scope gets one that is deleted at once). */
  open(): SpillFile {
    const { path, stream } = this.store.create();
    const f: SpillFile = { path, stream, bytes: 0 };
    this.files.push(f);
    if (this.released) this.drop(f);
    return f;
  }

  private drop(f: SpillFile): void {
    const s = f.stream;
    // Deleted only once its descriptor closed: unlinking before the (async) open would leave a file behind.
    if (s.closed) this.store.remove(f.path, f.bytes);
    else {
      s.once("close", () => this.store.remove(f.path, f.bytes));
      s.destroy();
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const f of this.files) this.drop(f);
    this.files = [];
  }
}
