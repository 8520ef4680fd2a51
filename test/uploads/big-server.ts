/**
 * A child-process server for the 1 GiB upload tests: its RSS is measured alone. Prints
 * `LISTENING <port>`; `test.Big/stats` reports the peak RSS since `test.Big/reset` and the files
 * in the upload directory; `test.Big/shutdown` closes the server, which then prints
 * `CLOSED <files left>` and exits.
 */
import { readdirSync } from "node:fs";
import { createServer, StreamedFile, Method, Param, Service } from "../../src/index.js";
import { hashStream } from "./services.js";

const dir = process.argv[2];
let peak = 0;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage.rss());
};
setInterval(sample, 10).unref();

@Service("test.Big")
class BigService {
  /** The file is not the last parameter: it is spilled to disk, then hashed from there. */
  @Method()
  async store(@Param("file") file: StreamedFile, @Param("note") note: string): Promise<{ sha256: string; size: number; spilled: boolean; note: string }> {
    const { sha256, size } = await hashStream(file.stream());
    return { sha256, size, spilled: file.path !== undefined, note };
  }

  /** The last parameter: hashed while it streams in. */
  @Method()
  async live(@Param("file") file: StreamedFile): Promise<{ sha256: string; size: number; streaming: boolean }> {
    const streaming = file.streaming;
    const { sha256, size } = await hashStream(file.stream());
    return { sha256, size, streaming };
  }

  @Method()
  reset(): number {
    global.gc?.();
    peak = process.memoryUsage.rss();
    return peak;
  }

  @Method()
  stats(): { peak: number; rss: number; files: string[]; spilled: number } {
    sample();
    return { peak, rss: process.memoryUsage.rss(), files: readdirSync(dir), spilled: server.uploads.used };
  }

  @Method()
  shutdown(): string {
    setImmediate(() => {
      void server.close().then(() => {
        setTimeout(() => {
          process.stdout.write(`CLOSED ${readdirSync(dir).length}\n`);
          process.exit(0);
        }, 100);
      });
    });
    return "closing";
  }
}

const GiB = 1024 * 1024 * 1024;
const server = createServer({
  services: [new BigService()],
  uploads: { dir, maxFileBytes: 2 * GiB, maxBytes: 2 * GiB },
  shutdownTimeoutMs: 100,
});
server.listen({ port: 0 }).then((a) => process.stdout.write(`LISTENING ${a.port}\n`));
