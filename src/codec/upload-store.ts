// Owns `peerKey`, `UploadStore`, `UploadScope`. The key a peer's disk share is counted under: an
// IPv4 address as it is (also when IPv4-mapped), an IPv6 address by its /64 prefix (one host is
// routinely given a whole /64). Must not change: limits are checked before memory is spent; bad
// input is a 4xx naming the problem.
import { randomBytes } from "node:crypto";
import { createWriteStream, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, type Stats, statSync, unlink, unlinkSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";

/** Temp file names: `triple-upload-<pid>-<24 hex>`; the pid lets a restart find a crashed process's leftovers. */
const NAME = /^triple-upload-(\d+)-[0-9a-f]{24}$/;
/** Default spill directories: `triple-rpc-uploads-<pid>-<6 random characters>` in the OS temp directory. */
const DEFAULT_DIR_PREFIX = "triple-rpc-uploads-";
const DEFAULT_DIR = /^triple-rpc-uploads-(\d+)-[A-Za-z0-9]{6}$/;

/** Every temp file of this process not yet deleted, removed synchronously if the process exits first. */
const live = new Set<string>();
/** The default directories this process made, removed (with anything left in them) at exit. */
const ownDirs = new Set<string>();
let exitHook = false;
/** The default directories of dead processes were looked for (once per process). */
let defaultsSwept = false;

function removeAllOnExit(): void {
  for (const p of live) {
    try {
      unlinkSync(p);
    } catch {}
  }
  live.clear();
  for (const d of ownDirs) rmSync(d, { recursive: true, force: true });
  ownDirs.clear();
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Disk full for uploads (the server-wide `maxUploadDiskBytes`): 507, resource_exhausted. */
function uploadDiskFull(limit: number): RpcError {
  return new RpcError(
    Code.ResourceExhausted,
    `the server's upload space is full: spilled uploads would exceed ${limit} bytes on disk (uploads.maxDiskBytes); retry later`,
    { httpStatus: 507 },
  );
}

/** One client address's share of the upload disk used up (`maxUploadDiskBytesPerPeer`): 507, resource_exhausted. */
function uploadPeerShareFull(limit: number): RpcError {
  return new RpcError(
    Code.ResourceExhausted,
    `this client's spilled uploads would exceed ${limit} bytes on disk (uploads.maxDiskBytesPerPeer, the share of one client address); retry when its other uploads have finished`,
    { httpStatus: 507 },
  );
}

/**
 * The key a peer's disk share is counted under: an IPv4 address as it is (also when IPv4-mapped),
 * an IPv6 address by its /64 prefix (one host is routinely given a whole /64).
 */
export function peerKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  const [head, tail] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || "0", 16).toString(16))
    .join(":")}::/64`;
}

/**
 * Refuses a spill directory others could tamper with: a temp file's path is handed to handlers,
 * and whoever can write the directory (or owns it) can rename or replace the file meanwhile.
 * Throws a TypeError naming the option; does nothing where there are no uids (Windows).
 */
function checkDirSafe(dir: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  let link: Stats;
  try {
    link = lstatSync(dir);
  } catch {
    return; // missing (created later) or unreachable (creating it fails, and says why)
  }
  // A symbolic link is followed only when it is ours (or root's): else its owner picks the directory.
  if (link.isSymbolicLink() && link.uid !== uid && link.uid !== 0) throw unsafeDir(dir, `is a symbolic link owned by uid ${link.uid}`);
  const st = link.isSymbolicLink() ? statSync(dir) : link;
  if (!st.isDirectory()) throw new TypeError(`createServer: uploads.dir ${dir} is not a directory`);
  if (st.uid !== uid) throw unsafeDir(dir, `is owned by uid ${st.uid}, not by this process (uid ${uid})`);
  if ((st.mode & 0o022) !== 0) throw unsafeDir(dir, `is writable by other users (mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")})`);
}

function unsafeDir(dir: string, why: string): TypeError {
  return new TypeError(
    `createServer: uploads.dir ${dir} ${why}: others could rename or replace spilled uploads while a handler reads them. ` +
      `Use a directory owned by this user that only it can write (chmod 700), or leave uploads.dir out for a private temp directory`,
  );
}

/** Deletes the temp files in `dir` left by processes that no longer run; the number deleted. */
function sweepDir(dir: string): number {
  let removed = 0;
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const n of names) {
    const m = NAME.exec(n);
    if (!m || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
    try {
      unlinkSync(join(dir, n));
      removed++;
    } catch {}
  }
  return removed;
}

/** Deletes the default directories (ours: same uid) of processes that no longer run, and their temp files. */
function sweepDefaultDirs(): number {
  const base = tmpdir();
  const uid = process.getuid?.();
  let removed = 0;
  let names: string[] = [];
  try {
    names = readdirSync(base);
  } catch {
    return 0;
  }
  for (const n of names) {
    const m = DEFAULT_DIR.exec(n);
    if (!m || Number(m[1]) === process.pid || processAlive(Number(m[1]))) continue;
    const dir = join(base, n);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      removed += sweepDir(dir);
      rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
  return removed;
}

/**
 * Where uploaded files past the memory threshold are spilled: one directory, a server-wide bound
 * on the bytes on disk and one per client address, and every file deleted by the call that made
 * it (see {@link UploadScope}), at process exit, and at start-up for the leftovers of a process
 * that crashed. Without a directory given, each store makes its own (`mkdtemp` in the OS temp
 * directory, mode 0700) and removes it on {@link close}.
 */
export class UploadStore {
  /** Bytes of spilled uploads currently on disk. */
  used = 0;
  /** Bytes on disk per client address ({@link peerKey}). */
  private readonly byPeer = new Map<string, number>();
  private made: string | undefined = undefined;

  constructor(
    /** The `uploads.dir` option; undefined: a private directory of this store's own. */
    readonly given: string | undefined,
    readonly maxDiskBytes: number,
    readonly maxPeerBytes: number = maxDiskBytes,
  ) {
    if (given !== undefined) checkDirSafe(given);
  }

  /** The spill directory (a default one is made on first use). */
  get dir(): string {
    this.prepare();
    return (this.given ?? this.made) as string;
  }

  /**
   * A given directory: creates it (0700) if needed, refuses one others could tamper with (a
   * TypeError), and deletes temp files left there by processes that no longer run (a crash skips
   * every cleanup); files of running processes are left alone, so servers may share a directory.
   * The default: deletes the default directories of processes that no longer run.
   */
  sweep(): number {
    // A default directory is made on the first spill; the dead processes' ones are looked for once per process.
    if (this.given === undefined) {
      if (defaultsSwept) return 0;
      defaultsSwept = true;
      return sweepDefaultDirs();
    }
    return sweepDir(this.dir);
  }

  private prepare(): void {
    if (this.made !== undefined) return;
    if (this.given === undefined) {
      this.made = mkdtempSync(join(tmpdir(), `${DEFAULT_DIR_PREFIX}${process.pid}-`));
      ownDirs.add(this.made);
    } else {
      mkdirSync(this.given, { recursive: true, mode: 0o700 });
      checkDirSafe(this.given);
      this.made = this.given;
    }
    if (!exitHook) {
      exitHook = true;
      process.once("exit", removeAllOnExit);
    }
  }

  /**
   * Reserves `n` more bytes on disk for the client at `peer` ({@link peerKey}), or the error to
   * answer when that would cross its share or the server's bound.
   */
  reserve(n: number, peer: string): RpcError | undefined {
    const mine = this.byPeer.get(peer) ?? 0;
    if (this.used + n > this.maxDiskBytes) return uploadDiskFull(this.maxDiskBytes);
    if (mine + n > this.maxPeerBytes) return uploadPeerShareFull(this.maxPeerBytes);
    this.used += n;
    this.byPeer.set(peer, mine + n);
    return undefined;
  }

  release(n: number, peer: string): void {
    this.used = Math.max(0, this.used - n);
    const left = (this.byPeer.get(peer) ?? 0) - n;
    if (left > 0) this.byPeer.set(peer, left);
    else this.byPeer.delete(peer);
  }

  /** A new temp file, created exclusively with mode 0600 under an unguessable name. */
  create(): { path: string; stream: WriteStream } {
    const path = join(this.dir, `triple-upload-${process.pid}-${randomBytes(12).toString("hex")}`);
    live.add(path);
    // A large buffer: fewer pause/resume cycles of the request body (each costs an HTTP/2 window update).
    return { path, stream: createWriteStream(path, { flags: "wx", mode: 0o600, highWaterMark: 1024 * 1024 }) };
  }

  /** Deletes a temp file (once its stream closed) and gives back its reserved bytes. */
  remove(path: string, bytes: number, peer: string): void {
    this.release(bytes, peer);
    unlink(path, () => live.delete(path));
  }

  /** The server closed: its default directory goes (its calls' files were deleted as they ended). */
  close(): void {
    const made = this.made;
    if (made === undefined || this.given !== undefined) return;
    ownDirs.delete(made);
    rmSync(made, { recursive: true, force: true });
    this.made = undefined;
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
 * temp files, counted against its client's share of the disk; `release()` (the call ended:
 * success, error, cancellation, deadline, shutdown) stops any write and deletes them all.
 * Idempotent.
 */
export class UploadScope {
  /** Bytes of files streamed in this call (to disk, or to the handler). */
  streamed = 0;
  private files: SpillFile[] = [];
  released = false;
  /** The client's key in the store's per-peer accounting. */
  private readonly peer: string;

  constructor(
    readonly store: UploadStore,
    peerAddress = "",
  ) {
    this.peer = peerKey(peerAddress);
  }

  /** A new temp file for this call (an already released scope gets one that is deleted at once). */
  open(): SpillFile {
    const { path, stream } = this.store.create();
    const f: SpillFile = { path, stream, bytes: 0 };
    this.files.push(f);
    if (this.released) this.drop(f);
    return f;
  }

  /** Reserves `n` more bytes of disk for this call's client, or the error that refuses them (507). */
  reserve(n: number): RpcError | undefined {
    return this.store.reserve(n, this.peer);
  }

  private drop(f: SpillFile): void {
    const s = f.stream;
    // Deleted only once its descriptor closed: unlinking before the (async) open would leave a file behind.
    if (s.closed) this.store.remove(f.path, f.bytes, this.peer);
    else {
      s.once("close", () => this.store.remove(f.path, f.bytes, this.peer));
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
