// Owns `VERSION`, `USER_AGENT`. The triple-rpc version (from package.json), quoted in failover
// messages and the user agent. Must not change: the code and status tables and error shapes every
// protocol shares.
import * as fs from "node:fs";
import * as path from "node:path";

function readVersion(): string {
  // The compiled file sits at <out>/src/protocol/version.js; package.json is three levels up.
  for (const rel of ["../../../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, rel), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "triple-rpc" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // not there: try the next candidate
    }
  }
  return "0.0.0";
}

/** The triple-rpc version (from package.json), quoted in failover messages and the user agent. */
export const VERSION: string = readVersion();

/** The `user-agent` our clients send. */
export const USER_AGENT = `triple-rpc/${VERSION} node/${process.versions.node}`;
