import { afterAll, describe, expect, test } from "bun:test";
import { callerConnection, isReadRequest, ReadOnlyKubeClient, WriteRefused } from "./read-only-client.ts";

/** A stand-in apiserver that counts what reaches it: a refused write must never arrive. */
const seen: string[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization")}`);
    return Response.json({ kind: "Status", metadata: {}, items: [] });
  },
});
afterAll(() => server.stop(true));

const cluster = {
  server: `http://127.0.0.1:${server.port}`,
  namespace: "default",
  tokenFile: "/nonexistent",
};

describe("ReadOnlyKubeClient", () => {
  test("GET and the self-review POSTs are reads; everything else is not", () => {
    expect(isReadRequest("GET", "/api/v1/pods")).toBe(true);
    expect(isReadRequest("get", "/apis/kruntimes.io/v1alpha1/runs?watch=1")).toBe(true);
    expect(isReadRequest("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")).toBe(true);
    expect(isReadRequest("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews?x=1")).toBe(true);
    expect(isReadRequest("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews")).toBe(false);
    expect(isReadRequest("POST", "/apis/kruntimes.io/v1alpha1/namespaces/a/runs")).toBe(false);
    for (const m of ["PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
      expect(isReadRequest(m, "/api/v1/pods")).toBe(false);
  });

  test("every write is refused before it leaves the process", async () => {
    const client = new ReadOnlyKubeClient(callerConnection(cluster, "t0k"));
    const p = "/apis/kruntimes.io/v1alpha1/namespaces/a/runs";
    const writes = [
      client.create(p, {}),
      client.replace(`${p}/x`, {}),
      client.patch(`${p}/x`, {}),
      client.apply(`${p}/x`, {}, "me"),
      client.delete(`${p}/x`),
      client.request("POST", `${p}/x/eviction`),
    ];
    for (const w of writes) await expect(w).rejects.toBeInstanceOf(WriteRefused);
    expect(seen).toEqual([]);
    await client.list(p);
    expect(seen).toEqual([`GET ${p} Bearer t0k`]);
  });

  test("the caller's connection carries only the cluster address, its CA and the caller's token", () => {
    const conn = callerConnection(
      { ...cluster, ca: "CA", cert: "CERT", key: "KEY", token: "mine", tokenFile: "/sa/token" },
      "theirs",
    );
    expect(conn).toEqual({
      server: cluster.server,
      ca: "CA",
      insecureSkipVerify: undefined,
      token: "theirs",
      namespace: "default",
      source: "caller token",
    });
  });

  test("the client's signal aborts its requests (a closed stream stops its watches)", async () => {
    const abort = new AbortController();
    const client = new ReadOnlyKubeClient(callerConnection(cluster, "t"), abort.signal);
    abort.abort();
    await expect(client.get("/api/v1/pods")).rejects.toThrow();
  });
});
