import * as assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { ZookeeperRegistry } from "../../src/index.js";
import { freePort, ZooKeeperServer, zookeeperMissing } from "../helpers/zookeeper.js";

/**
 * A ZooKeeper that is unreachable from the start used to be never logged (no session ever came,
 * so no 'disconnected' either), and the reconnection was logged at info, which the default
 * logger drops. Both ends of an outage are warnings now, once each.
 */

describe("registry: an outage from the start is logged once, and so is its end", { skip: zookeeperMissing() }, () => {
  let zk: ZooKeeperServer | undefined;
  after(() => zk?.stop());

  it("unreachable at first: one warning; reachable later: one warning saying connected again", async () => {
    const port = await freePort();
    const lines: string[] = [];
    const logger = { info() {}, warn: (_: object, m: string) => lines.push(m), error: (_: object, m: string) => lines.push(m) };
    const registry = new ZookeeperRegistry(`zookeeper://127.0.0.1:${port}`, { sessionTimeoutMs: 1000, logger });
    try {
      const deadline = Date.now() + 8000;
      while (!lines.some((l) => l.includes("cannot reach ZooKeeper")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 2500)); // several more failed attempts: still one line
      assert.equal(lines.filter((l) => l.includes("cannot reach ZooKeeper")).length, 1, lines.join("\n"));
      assert.match(lines[0], new RegExp(`cannot reach ZooKeeper at zookeeper://127\\.0\\.0\\.1:${port}: no session within 1000 ms`));
      zk = await ZooKeeperServer.start({ port });
      const until = Date.now() + 15_000;
      while (!lines.some((l) => l.includes("again")) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      assert.equal(lines.filter((l) => /connected to .* again/.test(l)).length, 1, lines.join("\n"));
    } finally {
      await registry.close();
    }
  });
});
