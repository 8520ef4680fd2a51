import { appendFileSync } from "node:fs";
import { createServer } from "../../src/index.js";
import { JournalService } from "./client-journal-service.js";

/**
 * A provider of the client's hostile tests, run as a child process (so it can be frozen with
 * SIGSTOP or killed with SIGKILL): `JournalService`, appending each call's id (one per line) to
 * the file JOURNAL before the handler works. Prints `LISTENING <port>`.
 */
async function main(): Promise<void> {
  const journal = process.env.JOURNAL;
  const server = createServer({ services: [new JournalService((id) => journal && appendFileSync(journal, `${id}\n`))] });
  await server.listen({ port: 0, host: "127.0.0.1" });
  process.stdout.write(`LISTENING ${server.address.port}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
