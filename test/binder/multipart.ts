/** One part of a hand-built multipart body. */
export interface PartSpec {
  name: string;
  data: string | Uint8Array;
  filename?: string;
  contentType?: string;
}

/** Builds a multipart/form-data body and its Content-Type, byte for byte. */
export function multipart(parts: PartSpec[], boundary = "----triple-test-boundary-7MA4YWxk"): { headers: Record<string, string>; body: Buffer } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.contentType) head += `Content-Type: ${p.contentType}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), typeof p.data === "string" ? Buffer.from(p.data) : Buffer.from(p.data), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body: Buffer.concat(chunks) };
}

/** Form request headers. */
export const FORM = { "content-type": "application/x-www-form-urlencoded" } as const;
/** XML request headers. */
export const XML = { "content-type": "application/xml" } as const;
/** Plain-text request headers. */
export const TEXT = { "content-type": "text/plain" } as const;
