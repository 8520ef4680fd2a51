import type { Readable } from "node:stream";
import { H } from "../protocol/headers.js";
import type { Download } from "../service/download.js";
import type { AbortSink, Exchange, OutHeaders } from "../transport/server/exchange.js";

/** `Content-Disposition` for a file name (RFC 6266): an ASCII `filename` fallback and a UTF-8 `filename*`. */
export function contentDisposition(filename: string | undefined, inline: boolean): string {
  const kind = inline ? "inline" : "attachment";
  if (filename === undefined || filename === "") return kind;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const utf8 = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return ascii === filename ? `${kind}; filename="${ascii}"` : `${kind}; filename="${ascii}"; filename*=UTF-8''${utf8}`;
}

/**
 * Sends a {@link Download} as the response body: headers first, then the bytes as the source
 * yields them, pausing it while the peer is slow (no buffering beyond the streams' own
 * high-water marks). A source that fails midway resets the exchange (the client sees a cut
 * response, never a truncated "success"); a peer that goes away destroys the source.
 * `done` is called once, when the body ended or failed.
 */
export class DownloadSender implements AbortSink {
  private readonly source: Readable;
  private over = false;

  constructor(
    private readonly ex: Exchange,
    download: Download,
    headers: OutHeaders,
    private readonly done: (err: Error | undefined) => void,
  ) {
    headers[H.contentType] = download.type ?? "application/octet-stream";
    if (download.size !== undefined) headers[H.contentLength] = download.size;
    headers["content-disposition"] = contentDisposition(download.filename, download.inline);
    headers["x-content-type-options"] = "nosniff";
    const source = (this.source = download.stream());
    ex.onAbort(this);
    ex.start(200, headers, false);
    source.on("data", (chunk: Buffer) => this.onData(chunk));
    source.on("end", () => this.finish(undefined));
    source.on("error", (e) => this.finish(e));
  }

  private onData(chunk: Buffer): void {
    if (this.over) return;
    if (!this.ex.write(chunk)) {
      this.source.pause();
      this.ex.onDrain(() => this.source.resume());
    }
  }

  private finish(err: Error | undefined): void {
    if (this.over) return;
    this.over = true;
    if (err) this.ex.reset();
    else this.ex.end();
    this.done(err);
  }

  onExchangeAbort(): void {
    if (this.over) return;
    this.over = true;
    this.source.destroy();
    this.done(new Error("the client went away during the download"));
  }
}
