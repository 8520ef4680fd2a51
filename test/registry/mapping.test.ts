import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertWithin } from "../helpers/timing.js";
import { appendApp, isApplicationName, listsApp, MAX_MAPPED_APPS, mappedApps, parseMapping } from "../../src/registry/mapping.js";

describe("registry: the mapping's text (bounded, linear)", () => {
  it("names are trimmed; empty ones and duplicates skipped; names no node can have counted as invalid", () => {
    assert.deepEqual(parseMapping(" a, b ,,a,c/d,..,.,x\u0001y,é"), { apps: ["a", "b", "é"], ignored: 0, invalid: 4 });
    assert.deepEqual(parseMapping(""), { apps: [], ignored: 0, invalid: 0 });
    assert.equal(isApplicationName("z".repeat(255)), true);
    assert.equal(isApplicationName("z".repeat(256)), false);
    assert.equal(isApplicationName("zookeeper"), true); // reserved only at the root
  });

  it("at most 256 applications are read; the rest is counted, and a 1 MiB mapping costs a scan, not 500 000 strings", async () => {
    const names = Array.from({ length: 10_001 }, (_, i) => `app-${i}`);
    const m = parseMapping(names.join(","));
    assert.equal(m.apps.length, MAX_MAPPED_APPS);
    assert.deepEqual(m.apps.slice(0, 2), ["app-0", "app-1"]);
    assert.equal(m.ignored, 10_001 - MAX_MAPPED_APPS);
    const huge = "a,".repeat(512 * 1024);
    assert.deepEqual(parseMapping(huge).apps, ["a"]);
    // Timed against splitting the same text at its commas (512k strings), back to back: a scan
    // costs less than that; the quadratic form took minutes. A ratio, not a wall-clock bound.
    await assertWithin(
      3,
      "a 1 MiB mapping against a split",
      () => parseMapping(huge),
      () => huge.split(","),
    );
    assert.deepEqual(mappedApps(["x", " y ", "x", ""], 1), { apps: ["x"], ignored: 3, invalid: 0 });
  });

  it("listsApp finds a whole entry only; appendApp appends as Dubbo does", () => {
    assert.equal(listsApp("x, app ,y", "app"), true);
    assert.equal(listsApp("a,app", "app"), true);
    assert.equal(listsApp("app", "app"), true);
    assert.equal(listsApp("xapp,y", "app"), false);
    assert.equal(listsApp("app2,apps", "app"), false);
    assert.equal(listsApp("", "app"), false);
    assert.equal(appendApp("", "a"), "a");
    assert.equal(appendApp("x", "a"), "x,a");
    assert.equal(appendApp(" x, ", "a"), "x,a");
  });
});
