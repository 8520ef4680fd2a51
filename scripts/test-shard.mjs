// One process running several compiled test files under node:test, one after another: the fast
// tier's files share a process so the library, the test helpers and their dependencies load once
// per shard instead of once per file (about half the tier's CPU went to starting processes).
// Must not change: files run in the order given; a file needing a process of its own is not given.
import { pathToFileURL } from "node:url";

for (const file of process.argv.slice(2)) await import(pathToFileURL(file).href);
