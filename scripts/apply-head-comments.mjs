// Inserts the head comments of scripts/head-comments.json ("<path under the repo>": "<text>") at
// the top of each listed file that does not already open with a comment (after a `#!` line),
// as `// ` lines wrapped at 100 columns. Reports listed paths that no longer exist and src/**/*.ts
// files that still open without a comment. Usage: node scripts/apply-head-comments.mjs [--check]
// (--check: change nothing, exit 1 if a src file lacks a head comment).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const WIDTH = 100;
const check = process.argv.includes("--check");
const comments = JSON.parse(readFileSync(new URL("./head-comments.json", import.meta.url), "utf8"));

/** True when the file's first line after an optional `#!` line is a comment. */
export function opensWithComment(text) {
  const lines = text.split("\n");
  const first = (lines[0].startsWith("#!") ? lines.slice(1) : lines).find((l) => l.trim() !== "");
  return first !== undefined && /^\s*(\/\/|\/\*)/.test(first);
}

function wrap(text) {
  const out = [];
  for (const paragraph of text.split("\n")) {
    let line = "//";
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line.length + 1 + word.length > WIDTH && line !== "//") {
        out.push(line);
        line = "//";
      }
      line += ` ${word}`;
    }
    out.push(line);
  }
  return out.join("\n");
}

function srcFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) srcFiles(p, out);
    else if (name.endsWith(".ts")) out.push(p);
  }
  return out;
}

let applied = 0;
const missing = [];
for (const [path, text] of Object.entries(comments)) {
  if (!existsSync(path)) {
    missing.push(path);
    continue;
  }
  const body = readFileSync(path, "utf8");
  if (opensWithComment(body)) continue;
  applied++;
  if (check) continue;
  const shebang = body.startsWith("#!") ? body.slice(0, body.indexOf("\n") + 1) : "";
  writeFileSync(path, `${shebang}${wrap(text)}\n${body.slice(shebang.length)}`);
}
const without = srcFiles("src").filter((f) => !opensWithComment(readFileSync(f, "utf8")));
if (missing.length) console.log(`listed but gone (renamed or removed? move their comment):\n  ${missing.join("\n  ")}`);
if (without.length) console.log(`src files without a head comment:\n  ${without.join("\n  ")}`);
console.log(`${check ? "would insert" : "inserted"} ${applied} head comments; ${without.length} src files without one`);
if (check && without.length) process.exit(1);
