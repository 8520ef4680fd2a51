// The servers of bench/uploads.mjs, one process each, pinned to CPU 0 by the bench:
//   ours <port> <dir>   triple-rpc (dist/): bench.Files/store (a StreamedFile spilled to a temp
//                       file in <dir>, the framework's own disk write), bench.Files/pipe (the
//                       streamed last parameter, piped by the handler to a file in <dir>) and
//                       bench.Files/download (Download.file of <dir>/download.bin)
//   bare <port> <dir>   node:http + node:http2 + @fastify/busboy writing the file part to a file
//                       in <dir>; GET-less POST /download answers fs.createReadStream(...).pipe(res)
// Both listen for HTTP/1.1 and h2c on the same port range (bare: port for h1, port+1 for h2).
import { createWriteStream, createReadStream, statSync, unlink } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const [, , kind, portArg, dir] = process.argv;
const port = Number(portArg);
const DOWNLOAD = join(dir, "download.bin");
let n = 0;

if (kind === "ours") {
  const { createServer, Download, StreamedFile, Method, Param, Service } = await import("../dist/src/index.js");
  class Files {
    async store(file, note) {
      return { size: file.size, note, spilled: file.path !== undefined };
    }
    async pipe(file) {
      const out = join(dir, `ours-${process.pid}-${n++}`);
      await pipeline(file.stream(), createWriteStream(out));
      unlink(out, () => {});
      return { size: file.size };
    }
    download() {
      return Download.file(DOWNLOAD);
    }
  }
  // The decorators, applied by hand (this file is plain JavaScript).
  const P = Files.prototype;
  const method = (name) => Method()(P, name, Object.getOwnPropertyDescriptor(P, name));
  Param({ name: "file", type: StreamedFile })(P, "store", 0);
  Param({ name: "note", type: String })(P, "store", 1);
  Param({ name: "file", type: StreamedFile })(P, "pipe", 0);
  for (const m of ["store", "pipe", "download"]) method(m);
  Service("bench.Files")(Files);
  const GiB = 1024 ** 3;
  const server = createServer({
    services: [new Files()],
    uploads: { dir, maxFileBytes: 4 * GiB, maxBytes: 4 * GiB },
  });
  await server.listen({ port });
  console.log("ready");
} else {
  const busboy = require("@fastify/busboy");
  /** Writes the file part of a multipart request to a file in `dir`, answers its size. */
  const upload = (headers, body, answer) => {
    const bb = busboy({ headers, limits: { fileSize: Number.POSITIVE_INFINITY } });
    let size = 0;
    let writing = Promise.resolve();
    bb.on("file", (_name, file) => {
      const out = join(dir, `bare-${process.pid}-${n++}`);
      file.on("data", (c) => {
        size += c.length;
      });
      writing = pipeline(file, createWriteStream(out)).then(() => unlink(out, () => {}));
    });
    bb.on("field", () => {});
    bb.on("finish", () => writing.then(() => answer(JSON.stringify({ size }))));
    body.pipe(bb);
  };
  http
    .createServer((req, res) => {
      if (req.url === "/download") {
        req.resume();
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": statSync(DOWNLOAD).size });
        createReadStream(DOWNLOAD).pipe(res);
        return;
      }
      upload(req.headers, req, (body) => res.writeHead(200, { "content-type": "application/json" }).end(body));
    })
    .listen(port, "127.0.0.1");
  const h2 = http2.createServer();
  h2.on("stream", (stream, headers) => {
    if (headers[":path"] === "/download") {
      stream.resume();
      stream.respond({ ":status": 200, "content-type": "application/octet-stream", "content-length": statSync(DOWNLOAD).size });
      createReadStream(DOWNLOAD).pipe(stream);
      return;
    }
    upload({ "content-type": headers["content-type"] }, stream, (body) => {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(body);
    });
  });
  h2.listen(port + 1, "127.0.0.1", () => console.log("ready"));
}
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
