import { describe, expect, test } from "bun:test";
import type { Run } from "@kruntimes/api";
import { EndpointIndex, type EndpointSlice } from "./endpoint-index.ts";
import { resolveRun, sameRoute } from "./route.ts";

function fnRun(
  over: {
    phase?: string;
    mode?: "function" | "session" | "task";
    endpoint?: boolean;
    /** status.endpoint.address, as runtimed writes it. */
    address?: string;
    maxRequestBytes?: number;
  } = {},
): Run {
  const mode = over.mode ?? "function";
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "fn", namespace: "ns", uid: "run-uid" },
    spec: {
      runtime: "python",
      mode:
        mode === "function"
          ? { function: { handler: "handle", maxRequestBytes: over.maxRequestBytes } }
          : mode === "session"
            ? { session: {} }
            : { task: {} },
    },
    status: {
      phase: over.phase ?? "Ready",
      ...(over.endpoint === false
        ? {}
        : {
            endpoint: {
              pod: "python-abc",
              podUID: "pod-uid",
              attempt: 2,
              ...(over.address ? { address: over.address } : {}),
            },
          }),
    },
  } as unknown as Run;
}

function slice(
  name: string,
  eps: [uid: string, ip: string, ready?: boolean, terminating?: boolean][],
  port: number | null = 8444,
): EndpointSlice {
  return {
    metadata: { name, namespace: "ns" },
    addressType: "IPv4",
    ports:
      port === null
        ? [{ name: "runtimed", port: 8081 }]
        : [
            { name: "runtimed", port: 8081 },
            { name: "dataplane", port },
          ],
    endpoints: eps.map(([uid, ip, ready, terminating]) => ({
      addresses: [ip],
      conditions: { ready: ready ?? true, terminating: terminating ?? false },
      targetRef: { kind: "Pod", uid, name: `pod-${uid}` },
    })),
  };
}

describe("EndpointIndex", () => {
  test("maps pod UIDs to the dataplane port of their slice", () => {
    const idx = new EndpointIndex();
    idx.upsert(
      slice("python-1", [
        ["pod-uid", "10.0.0.5"],
        ["other", "10.0.0.6", false],
      ]),
    );
    expect(idx.get("pod-uid")).toEqual({
      address: "10.0.0.5:8444",
      pod: "pod-pod-uid",
      ready: true,
      terminating: false,
    });
    expect(idx.get("other")?.ready).toBe(false);
  });

  test("an update replaces what the slice said; a delete forgets it", () => {
    const idx = new EndpointIndex();
    idx.upsert(
      slice("s", [
        ["a", "10.0.0.1"],
        ["b", "10.0.0.2"],
      ]),
    );
    idx.upsert(slice("s", [["b", "10.0.0.9"]]));
    expect(idx.get("a")).toBeUndefined();
    expect(idx.get("b")?.address).toBe("10.0.0.9:8444");
    idx.remove(slice("s", []));
    expect(idx.size).toBe(0);
  });

  test("a slice without a dataplane port routes nothing", () => {
    const idx = new EndpointIndex();
    idx.upsert(slice("s", [["a", "10.0.0.1"]], null));
    expect(idx.get("a")).toBeUndefined();
  });

  test("IPv6 addresses are bracketed", () => {
    const idx = new EndpointIndex();
    idx.upsert({ ...slice("s", [["a", "fd00::5"]]), addressType: "IPv6" });
    expect(idx.get("a")?.address).toBe("[fd00::5]:8444");
  });

  test("waitFor resolves when the pod appears, or after the wait with nothing", async () => {
    const idx = new EndpointIndex();
    expect(await idx.waitFor("x", 5)).toBeUndefined();
    const pending = idx.waitFor("a", 60_000);
    idx.upsert(slice("s", [["a", "10.0.0.1"]]));
    expect((await pending)?.address).toBe("10.0.0.1:8444");
  });
});

describe("resolveRun", () => {
  const idx = new EndpointIndex();
  idx.upsert(slice("s", [["pod-uid", "10.0.0.5"]]));
  const addr = (uid: string) => idx.get(uid);

  test("a Ready function Run with a known pod is a fenced route", () => {
    const r = resolveRun(fnRun({ maxRequestBytes: 2048 }), "function", addr);
    expect(r).toEqual({
      kind: "route",
      route: {
        namespace: "ns",
        name: "fn",
        runUID: "run-uid",
        pod: "python-abc",
        podUID: "pod-uid",
        attempt: 2,
        address: "10.0.0.5:8444",
        via: "slice",
        maxRequestBytes: 2048,
      },
    });
  });

  test("the Run's request limit defaults to 1 MiB", () => {
    const r = resolveRun(fnRun(), "function", addr);
    expect(r.kind === "route" && r.route.maxRequestBytes).toBe(1024 * 1024);
  });

  test.each([
    ["Pending", "function", true],
    ["Succeeded", "function", true],
    ["Ready", "session", true],
    ["Succeeded", "task", true],
    ["Ready", "function", false],
  ] as const)("phase %s, mode %s, endpoint %p is not callable", (phase, mode, endpoint) => {
    const r = resolveRun(fnRun({ phase, mode, endpoint }), "function", addr);
    expect(r).toEqual({ kind: "notReady", phase, mode });
  });

  test("a Ready Run whose pod has no endpoint yet says which pod", () => {
    const r = resolveRun(fnRun(), "function", () => undefined);
    expect(r).toEqual({
      kind: "noEndpoint",
      pod: "python-abc",
      podUID: "pod-uid",
      attempt: 2,
      runUID: "run-uid",
    });
  });

  test("the slice's entry wins over status.endpoint.address", () => {
    const r = resolveRun(fnRun({ address: "127.0.0.9:8444" }), "function", addr);
    expect(r.kind === "route" && [r.route.address, r.route.via]).toEqual(["10.0.0.5:8444", "slice"]);
  });

  test("no slice entry for the pod: status.endpoint.address (loopback pod IPs)", () => {
    const r = resolveRun(fnRun({ address: "127.0.0.9:8444" }), "function", () => undefined);
    expect(r.kind === "route" && [r.route.address, r.route.via]).toEqual(["127.0.0.9:8444", "status"]);
    expect(r.kind === "route" && [r.route.podUID, r.route.attempt]).toEqual(["pod-uid", 2]);
  });

  test("a pod the slice calls terminating is not called, whatever the status says", () => {
    const t = new EndpointIndex();
    t.upsert(slice("s", [["pod-uid", "10.0.0.5", false, true]]));
    const r = resolveRun(fnRun({ address: "127.0.0.9:8444" }), "function", (uid) => t.get(uid));
    expect(r).toEqual({
      kind: "terminating",
      pod: "python-abc",
      podUID: "pod-uid",
      attempt: 2,
      runUID: "run-uid",
    });
  });

  test("a not-ready (not terminating) slice entry is still the route: the Run's Ready status and the fence decide", () => {
    const t = new EndpointIndex();
    t.upsert(slice("s", [["pod-uid", "10.0.0.5", false]]));
    const r = resolveRun(fnRun(), "function", (uid) => t.get(uid));
    expect(r.kind === "route" && r.route.address).toBe("10.0.0.5:8444");
  });

  test("sameRoute compares the fence", () => {
    const a = { runUID: "r", podUID: "p", attempt: 1 };
    expect(sameRoute(a, { ...a })).toBe(true);
    expect(sameRoute(a, { ...a, attempt: 2 })).toBe(false);
    expect(sameRoute(a, { ...a, podUID: "q" })).toBe(false);
  });
});
