import * as zlib from "node:zlib";

const MiB = 1024 * 1024;

/**
 * gzip of `mib` MiB of zeros, built without ever holding (or deflating) that much: one member
 * of 1 MiB zeros repeated — concatenated gzip members are one valid gzip stream (RFC 1952 §2.2).
 * 1 GiB comes out at about 1 MiB.
 */
export function gzipZeros(mib: number): Buffer {
  const member = zlib.gzipSync(Buffer.alloc(MiB), { level: 9 });
  return Buffer.concat(Array.from({ length: mib }, () => member));
}

/** deflate (zlib) of `mib` MiB of zeros, streamed through the compressor 1 MiB at a time. */
export function deflateZeros(mib: number): Promise<Buffer> {
  return compressZeros(zlib.createDeflate({ level: 9 }), mib);
}

/** brotli of `mib` MiB of zeros, streamed 1 MiB at a time. */
export function brotliZeros(mib: number): Promise<Buffer> {
  return compressZeros(zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }), mib);
}

function compressZeros(z: zlib.Deflate | zlib.BrotliCompress, mib: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    z.on("data", (c: Buffer) => out.push(c));
    z.on("end", () => resolve(Buffer.concat(out)));
    z.on("error", reject);
    const zero = Buffer.alloc(MiB);
    let left = mib;
    const pump = () => {
      while (left > 0) {
        left--;
        if (!z.write(zero)) {
          z.once("drain", pump);
          return;
        }
      }
      z.end();
    };
    pump();
  });
}
