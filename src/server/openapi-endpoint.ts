// Owns `DOCS_CSP`, `OpenApiEndpoint`. The docs page's Content-Security-Policy: its scripts, styles
// and images from this server only (Swagger UI's bundle, no inline script … Must not change: limits
// before reading, authorization before decoding (docs/security.md).
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { Code } from "../protocol/code.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { sendHttpError } from "../runtime/http-error.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { type OpenApiOptions, toOpenApi } from "./openapi.js";
import { quote } from "../protocol/wire-text.js";

/** `createServer({ openapi })`: where the document and the docs page are served, and the document's `info`. */
export interface OpenApiServeOptions extends OpenApiOptions {
  /** Where the OpenAPI 3.1 document is served (GET). Default `/openapi.json`. */
  path?: string;
  /**
   * Where the Swagger UI docs page is served (GET), built from the `swagger-ui-dist` package in
   * `node_modules` (an optional peer dependency: without it the page answers 501 naming it; no
   * CDN, no network): "Try it out" calls this server. `false` serves the document only. Default `/docs`.
   */
  docs?: string | false;
}

/** The Swagger UI files the docs page loads, and their types. */
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
  "favicon-16x16.png": "image/png",
};

/**
 * The docs page's Content-Security-Policy: its scripts, styles and images from this server only
 * (Swagger UI's bundle, no inline script; its components set styles inline and its stylesheet
 * has data: images), fetches to this server only ("Try it out", the document), no plugins,
 * forms or `<base>`, and no framing by any page (clickjacking), with `X-Frame-Options: DENY` for
 * browsers that predate `frame-ancestors`.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function page(title: string, docsPath: string): string {
  const esc = title.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc}</title>
<link rel="stylesheet" href="${docsPath}/swagger-ui.css">
<link rel="icon" type="image/png" href="${docsPath}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${docsPath}/swagger-ui-bundle.js"></script>
<script src="${docsPath}/init.js"></script>
</body>
</html>
`;
}

/**
 * Serves `/openapi.json` and the `/docs` page (GET and HEAD), ahead of the protocols. The
 * document is built on first request and again after a service is registered; Swagger UI's
 * files are read from `node_modules/swagger-ui-dist` once.
 */
export class OpenApiEndpoint {
  readonly path: string;
  readonly docsPath: string | undefined;
  private doc: Buffer | undefined;
  private readonly files = new Map<string, Buffer>();

  constructor(
    private readonly options: OpenApiServeOptions,
    private readonly services: () => readonly ServiceDescriptor[],
  ) {
    this.path = options.path ?? "/openapi.json";
    this.docsPath = options.docs === false ? undefined : (options.docs ?? "/docs").replace(/\/+$/, "");
    for (const p of [this.path, this.docsPath]) {
      if (p !== undefined && !p.startsWith("/")) throw new TypeError(`createServer({ openapi }): paths must start with "/", got ${JSON.stringify(p)}`);
    }
  }

  /** The services changed: rebuild the document on the next request. */
  invalidate(): void {
    this.doc = undefined;
  }

  /** True when `path` is the document's or under the docs page's. */
  serves(path: string): boolean {
    const docs = this.docsPath;
    return path === this.path || (docs !== undefined && path.startsWith(docs) && (path.length === docs.length || path[docs.length] === "/"));
  }

  /** Answers the request when it is for the document or the docs page; false otherwise. */
  handle(ex: Exchange): boolean {
    if (ex.method !== "GET" && ex.method !== "HEAD") return false;
    const p = ex.path;
    if (p === this.path) {
      this.doc ??= Buffer.from(JSON.stringify(toOpenApi(this.services(), this.options)));
      send(ex, "application/json", this.doc, "no-cache");
      return true;
    }
    const docs = this.docsPath;
    if (docs === undefined || !p.startsWith(docs) || (p.length > docs.length && p[docs.length] !== "/")) return false;
    const file = p.slice(docs.length + 1);
    if (file === "" || file === "index.html") {
      if (swaggerUiDir() === undefined) sendHttpError(ex, swaggerUiMissing());
      else
        send(ex, "text/html; charset=utf-8", Buffer.from(page(this.options.title ?? "API docs", docs)), "no-cache", {
          "content-security-policy": DOCS_CSP,
          "x-frame-options": "DENY",
        });
    } else if (file === "init.js") send(ex, "text/javascript; charset=utf-8", Buffer.from(this.initScript()), "no-cache");
    else if (ASSETS[file] !== undefined) this.sendAsset(ex, file);
    else sendHttpError(ex, new RpcError(Code.NotFound, `no such file of the docs page: ${quote(file)}`, { httpStatus: 404 }));
    return true;
  }

  private initScript(): string {
    const url = JSON.stringify(this.path);
    return `window.ui = SwaggerUIBundle({ url: ${url}, dom_id: "#swagger-ui", deepLinking: true, tryItOutEnabled: false });\n`;
  }

  private sendAsset(ex: Exchange, file: string): void {
    let body = this.files.get(file);
    if (!body) {
      const dir = swaggerUiDir();
      try {
        if (dir === undefined) throw new Error("swagger-ui-dist is not installed");
        body = readFileSync(path.join(dir, file));
      } catch (e) {
        // Not the error's text: it names the server's directories.
        sendHttpError(ex, swaggerUiMissing(e));
        return;
      }
      this.files.set(file, body);
    }
    send(ex, ASSETS[file], body, "public, max-age=3600");
  }
}

/**
 * Where swagger-ui-dist is installed, undefined when it is not: it is an optional peer dependency
 * (12 MB), installed by apps that serve the docs page.
 */
function swaggerUiDir(): string | undefined {
  try {
    return path.dirname(require.resolve("swagger-ui-dist/package.json"));
  } catch {
    return undefined;
  }
}

function swaggerUiMissing(cause?: unknown): RpcError {
  return new RpcError(
    Code.Unimplemented,
    "Install swagger-ui-dist to serve the docs UI: npm i swagger-ui-dist (or turn the page off: openapi: { docs: false })",
    { httpStatus: 501, cause },
  );
}

function send(ex: Exchange, contentType: string, body: Buffer, cache: string, extra?: OutHeaders): void {
  const headers: OutHeaders = { [H.contentType]: contentType, "cache-control": cache, "x-content-type-options": "nosniff", ...extra };
  if (ex.method === "HEAD") {
    headers[H.contentLength] = body.byteLength;
    ex.respond(200, headers, ex.httpVersion === "1.1" ? body : undefined);
  } else {
    ex.respond(200, headers, body);
  }
  ex.discardBody(false);
}
