// Commit subjects of at most 72 characters, the detail in the body (CONTRIBUTING.md).
// Checks the commits after BASE (default: 2f6559a, the first commit the rule applies to; older
// subjects are long and history is not rewritten). Usage: node scripts/check-commits.mjs [base]
import { execFileSync } from "node:child_process";

const MAX = 72;
const base = process.argv[2] ?? process.env.COMMITS_BASE ?? "2f6559a";
const git = (...args) => execFileSync("git", args, { encoding: "utf8" });

try {
  git("rev-parse", "--verify", "--quiet", `${base}^{commit}`);
} catch {
  // A shallow clone (some CI checkouts) lacks the history to check: say so, do not fail the run.
  console.error(`check-commits: base commit ${base} is not in this clone (a shallow clone? run "git fetch --unshallow", or pass another base); not checked`);
  process.exit(0);
}
const lines = git("log", "--format=%h%x09%s", `${base}..HEAD`).split("\n").filter(Boolean);
const long = lines
  .map((l) => {
    const [hash, ...rest] = l.split("\t");
    return { hash, subject: rest.join("\t") };
  })
  .filter((c) => [...c.subject].length > MAX);
if (long.length > 0) {
  console.error(`check-commits: ${long.length} of ${lines.length} commits after ${base} have a subject over ${MAX} characters:`);
  for (const c of long) console.error(`  ${c.hash} (${[...c.subject].length}) ${c.subject}`);
  console.error("Shorten the subject to at most 72 characters and move the detail into the body.");
  process.exit(1);
}
console.log(`check-commits: ${lines.length} commits after ${base}, every subject at most ${MAX} characters`);
