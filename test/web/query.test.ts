import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hashKey, MutationObserver, QueryClient } from "@tanstack/query-core";
import { Code, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { createClient, mutationOptions, queryKey, queryOptions } from "../../src/web.js";
import { WebTestContract } from "./contract.js";
import { WebTestService } from "./service.js";

/** The TanStack Query helpers of the web client, driven by @tanstack/query-core against our server. */
describe("web client: TanStack Query helpers", () => {
  let server: TripleServer;
  let qc: QueryClient;
  before(async () => {
    server = createServer({ services: [new WebTestService()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  });
  after(async () => {
    qc.clear();
    await server?.close();
  });

  it("queryOptions: fetchQuery calls the method, and the cache answers the same key", async () => {
    let calls = 0;
    const c = createClient(WebTestContract, {
      baseUrl: server.url,
      interceptors: [
        (next) => (call) => {
          calls++;
          return next(call);
        },
      ],
    });
    assert.equal(await qc.fetchQuery({ ...queryOptions(c.greet, ["query"]), staleTime: 60_000 }), "hello, query");
    assert.equal(await qc.fetchQuery({ ...queryOptions(c.greet, ["query"]), staleTime: 60_000 }), "hello, query");
    assert.equal(calls, 1);
    assert.equal(qc.getQueryData(queryKey(c.greet, ["query"])), "hello, query");
  });

  it("query keys: service, method, arguments in their JSON form; stable, hashable, bigint and Date included", () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    assert.deepEqual(queryKey(c.profile, ["a", 5n]), ["triple-rpc", "web.WebTest", "profile", ["a", "5"]]);
    assert.deepEqual(queryKey(c.nextDay, [new Date(Date.UTC(2024, 0, 1))]), ["triple-rpc", "web.WebTest", "nextDay", ["2024-01-01T00:00:00.000Z"]]);
    assert.equal(hashKey(queryKey(c.profile, ["a", 5n])), hashKey(queryKey(c.profile, ["a", 5n])));
    assert.deepEqual(queryKey(c.greet), ["triple-rpc", "web.WebTest", "greet"]);
  });

  it("a server-streaming method's query collects its messages; invalidation by the service prefix", async () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    assert.deepEqual(await qc.fetchQuery(queryOptions(c.count, [2])), [10_000_000_000n, 20_000_000_000n]);
    await qc.invalidateQueries({ queryKey: ["triple-rpc", "web.WebTest"] });
    assert.equal(qc.getQueryState(queryKey(c.count, [2]))?.isInvalidated, true);
  });

  it("errors reach the query as RpcError; TanStack's cancel aborts the call", async () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    await assert.rejects(qc.fetchQuery(queryOptions(c.greet, ["nobody"])), (e: RpcError) => e instanceof RpcError && e.code === Code.InvalidArgument);
    const slow = qc.fetchQuery(queryOptions(c.slow, [5000]));
    setTimeout(() => void qc.cancelQueries({ queryKey: queryKey(c.slow) }), 100);
    const t0 = Date.now();
    await assert.rejects(slow);
    // Before the call's own 5 s (less a margin): the cancel ended it (one-sided, generous).
    assert.ok(Date.now() - t0 < 4900, `ended after ${Date.now() - t0} ms`);
  });

  it("mutationOptions: a MutationObserver runs the method with its arguments", async () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    const m = new MutationObserver(qc, mutationOptions(c.add));
    assert.equal(await m.mutate([20, 22]), 42);
    assert.deepEqual(mutationOptions(c.add).mutationKey, ["triple-rpc", "web.WebTest", "add"]);
  });

  it("misuse: a stream method for a mutation, a plain function: TypeErrors naming the fix", () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    assert.throws(() => mutationOptions(c.count), /mutationOptions: \/web\.WebTest\/count is server streaming/);
    assert.throws(() => queryOptions(c.sum, [[1]] as never), /queryOptions: \/web\.WebTest\/sum is client streaming/);
    assert.throws(() => queryOptions((() => 1) as never, [] as never), /a method of a client made by triple-rpc\/web/);
  });
});
