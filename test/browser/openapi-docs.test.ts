import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { createServer, type TripleServer } from "../../src/index.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import { UserService } from "../rest/fixtures.js";

const TESSERACT = "/usr/bin/tesseract";

/**
 * The docs page from a real browser (issue 28 item 3): headless Chromium opens `/docs` (Swagger
 * UI from node_modules, no network), runs "Try it out" on `GET /users/{id}` against the server,
 * and the answer shows on the page; the screenshot of the response is read back with OCR.
 */
describe("the /docs page in headless Chromium", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let server: TripleServer;
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  const requests: string[] = [];
  const console: string[] = [];

  before(async () => {
    server = createServer({ services: [new UserService()], openapi: { title: "Users API" } });
    await server.listen({ port: 0 });
    dir = mkdtempSync(path.join(tmpdir(), "triple-docs-"));
    context = await chromium.launchPersistentContext(path.join(dir, "profile"), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      deviceScaleFactor: 2,
    });
    page = await context.newPage();
    page.on("request", (r) => requests.push(r.url()));
    page.on("console", (m) => console.push(`${m.type()}: ${m.text()}`));
  });

  after(async () => {
    await context?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await server?.close();
  });

  it("Try it out on GET /users/{id} calls the server and shows the answer", async () => {
    const doc = await page.goto(`${server.url}/docs`);
    assert.equal(await page.title(), "Users API");
    // Issue 33: the page is framed by no one, and its Content-Security-Policy lets it work.
    assert.match(String(doc?.headers()["content-security-policy"]), /frame-ancestors 'none'/);
    assert.equal(doc?.headers()["x-frame-options"], "DENY");
    const op = page.locator(".opblock-get", { has: page.locator('[data-path="/users/{id}"]') });
    await op.locator(".opblock-summary").first().click();
    await op.locator("button.try-out__btn").click();
    await op.locator('input[placeholder="id"]').fill("1");
    await op.locator("button.execute").click();
    const live = op.locator(".live-responses-table");
    await live.locator(".response-col_status", { hasText: "200" }).first().waitFor({ timeout: 15_000 });
    const body = op.locator(".live-responses-table .response-col_description pre").first();
    const text = await body.innerText();
    assert.deepEqual(JSON.parse(text), { id: 1, name: "ann", tags: ["admin"] });
    // Every request the page made went to this server: nothing from a CDN.
    assert.ok(requests.length > 3);
    for (const u of requests) assert.ok(u.startsWith(server.url), `the docs page fetched ${u}`);
    assert.ok(requests.includes(`${server.url}/users/1`), `no request to /users/1 in ${requests.join(" ")}`);
    assert.deepEqual(
      console.filter((m) => /Content Security Policy|Refused to/i.test(m)),
      [],
      "the page's CSP blocked something it needs",
    );

    // Swagger UI shows the body light on dark, which OCR reads poorly: dark on white, larger.
    await page.addStyleTag({
      content: ".live-responses-table pre, .live-responses-table pre * { background: #fff !important; color: #000 !important; font-size: 20px !important; }",
    });
    const shot = path.join(dir, "response.png");
    writeFileSync(shot, await body.screenshot());
    if (process.env.KEEP_SHOT) writeFileSync(process.env.KEEP_SHOT, await body.screenshot());
    if (existsSync(TESSERACT) || process.env.CI) {
      const seen = execFileSync(TESSERACT, [shot, "stdout", "--psm", "6"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
      assert.match(seen, /ann/, `OCR of the response screenshot: ${seen}`);
      assert.match(seen, /admin/);
    }
  });
});
