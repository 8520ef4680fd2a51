import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { pipeline } from "node:stream/promises";
import { Readable, Writable } from "node:stream";
import { Body, Download, Field, StreamedFile, Get, Method, Param, Path, Post, Service, InMemoryFile } from "../../src/index.js";

/** What a handler saw of one file. */
export interface Seen {
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  /** Spilled to disk: its path, mode and size on disk while the handler ran. */
  path?: string;
  mode?: number;
  streaming: boolean;
}

/** Hashes a stream (with backpressure) and counts its bytes. */
export async function hashStream(s: NodeJS.ReadableStream): Promise<{ sha256: string; size: number }> {
  const h = createHash("sha256");
  let size = 0;
  await pipeline(
    s,
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        h.update(chunk);
        cb();
      },
    }),
  );
  return { sha256: h.digest("hex"), size };
}

async function see(f: StreamedFile): Promise<Seen> {
  const path = f.path;
  const mode = path ? statSync(path).mode & 0o777 : undefined;
  const streaming = f.streaming;
  const { sha256, size } = await hashStream(f.stream());
  return { filename: f.filename, contentType: f.contentType, size, sha256, path, mode, streaming };
}

/** A multipart form with files as fields of a class. */
export class Album {
  @Field(String) title!: string;
  @Field(StreamedFile) cover!: StreamedFile;
  @Field({ type: [StreamedFile], optional: true }) photos!: StreamedFile[];
}

@Service("test.Uploads")
export class UploadService {
  /** Paths of files handlers saw, to check they are gone after the call. */
  static paths: string[] = [];

  /** A file that is NOT the last parameter: bound (spilled past the threshold) before the handler runs. */
  @Method()
  async stored(@Param("file") file: StreamedFile, @Param("note") note: string): Promise<Seen & { note: string }> {
    const s = await see(file);
    if (s.path) UploadService.paths.push(s.path);
    return { ...s, note };
  }

  /** The last parameter: the handler starts while the file streams in. */
  @Method()
  async live(@Param("label") label: string, @Param("file") file: StreamedFile): Promise<Seen & { label: string }> {
    return { ...(await see(file)), label };
  }

  /** The last parameter, read only after a second: meanwhile the body waits on the handler (backpressure), not on the client. */
  @Method()
  async slowRead(@Param("label") label: string, @Param("file") file: StreamedFile): Promise<Seen & { label: string }> {
    await new Promise((r) => setTimeout(r, 1_000));
    return { ...(await see(file)), label };
  }

  /** Several files under one name. */
  @Method()
  async many(@Param({ name: "files", type: [StreamedFile] }) files: StreamedFile[]): Promise<Seen[]> {
    const out: Seen[] = [];
    for (const f of files) {
      const s = await see(f);
      if (s.path) UploadService.paths.push(s.path);
      out.push(s);
    }
    return out;
  }

  /** Files as fields of a class. */
  @Method()
  async album(form: Album): Promise<{ title: string; cover: Seen; photos: Seen[] }> {
    const photos: Seen[] = [];
    for (const p of form.photos ?? []) photos.push(await see(p));
    return { title: form.title, cover: await see(form.cover), photos };
  }

  /** The in-memory types keep working as before. */
  @Method()
  legacy(@Param("a") a: Uint8Array, @Param("b") b: InMemoryFile): { a: number; b: number; name: string } {
    return { a: a.length, b: b.length, name: b.filename };
  }

  /** Reads nothing of its (live) file and answers at once. */
  @Method()
  ignore(@Param("file") file: StreamedFile): { name: string } {
    return { name: file.filename };
  }

  /** Waits for a cancellation while holding its spilled file. */
  @Method()
  async hold(@Param("file") file: StreamedFile, @Param("n") _n: number): Promise<string> {
    if (file.path) UploadService.paths.push(file.path);
    await new Promise((r) => setTimeout(r, 60_000).unref());
    return "late";
  }
}

/** Test-only downloads: every kind of body a method may return. */
@Service("test.Downloads")
export class DownloadService {
  /** Bytes the lazy source produced so far (to see backpressure hold it back). */
  static produced = 0;

  @Method()
  async file(@Param("path") path: string): Promise<Download> {
    return Download.file(path, { type: "application/x-test" });
  }

  @Method({ returns: Download })
  readable(@Param("size") size: number): Readable {
    return lazy(size);
  }

  @Method()
  named(@Param("name") name: string): Download {
    return new Download(Buffer.from("hello"), { filename: name, type: "text/plain" });
  }

  @Method()
  blob(): Blob {
    return new Blob(["blob body"], { type: "text/csv" });
  }

  @Method()
  web(): ReadableStream<Uint8Array> {
    return new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode("web "));
        c.enqueue(new TextEncoder().encode("stream"));
        c.close();
      },
    });
  }

  /** Fails after 1 MiB: the client must see a cut response. */
  @Method()
  broken(): Readable {
    let n = 0;
    return new Readable({
      read() {
        if (n++ < 16) this.push(Buffer.alloc(65536, 1));
        else this.destroy(new Error("disk on fire"));
      },
    });
  }

  /** Echoes an uploaded file back as a download (the browser test). */
  @Method()
  echo(@Param("file") file: StreamedFile): Download {
    // A file still streaming in has no final size yet: no Content-Length.
    return new Download(file.stream(), { filename: file.filename, type: file.contentType, size: file.streaming ? undefined : file.size });
  }
}

/** `size` bytes produced on demand, counted in `DownloadService.produced`. */
function lazy(size: number): Readable {
  let left = size;
  DownloadService.produced = 0;
  const block = Buffer.alloc(64 * 1024, 7);
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const n = Math.min(left, block.length);
      left -= n;
      DownloadService.produced += n;
      this.push(n === block.length ? block : block.subarray(0, n));
    },
  });
}

/** A REST route taking a streamed file. */
@Service("test.RestFiles")
export class RestFileService {
  @Post("/files/{id}")
  async put(@Path("id") id: string, @Body("file") file: StreamedFile): Promise<Seen & { id: string }> {
    return { ...(await see(file)), id };
  }
}

/** A GET route returning files: Range requests. */
@Service("test.RangeFiles")
export class RangeFileService {
  static dir = "";
  @Get("/dl/{name}")
  file(@Path("name") name: string): Promise<Download> {
    return Download.file(`${RangeFileService.dir}/${name.replace(/[/\\\\]/g, "_")}`);
  }
}
