import { describe, expect, test } from "bun:test";
import { type Affinity, Reason, TopologyKeys } from "@kruntimes/api";
import { compiledAffinity } from "../../cache/affinity-terms.ts";
import { domainOf, PlacementIndex } from "../../cache/placement-index.ts";
import { findPod, isPlacement } from "../../cycle/find-pod.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { Code } from "../../framework/status.ts";
import type { PodView, RunRequest } from "../../framework/types.ts";
import { builtinRegistry, DEFAULT_PROFILE } from "../index.ts";
import { New, RunAffinity } from "./run-affinity.ts";

const TOPOLOGY = TopologyKeys.runtimePod;
const term = (matchLabels: Record<string, string>) => ({
  labelSelector: { matchLabels },
  topologyKey: TOPOLOGY,
});
const required = (labels: Record<string, string>): Affinity => ({
  runAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] },
});
const apart = (labels: Record<string, string>): Affinity => ({
  runAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(labels)] },
});

function pod(name: string, used = 0, capacity = 4): PodView {
  return {
    key: `ns/${name}`,
    name,
    uid: `u-${name}`,
    domain: domainOf(`ns/${name}`, `u-${name}`),
    node: "n",
    capacity: { runs: capacity },
    used: { runs: used },
    unavailability: () => undefined,
  };
}

function run(name: string, labels: Record<string, string> = {}, affinity?: Affinity): RunRequest {
  return {
    key: `ns/${name}`,
    runtimeKey: "ns/rt",
    namespace: "ns",
    labels,
    priority: 0,
    names: ["runs"],
    amounts: [1],
    ...(affinity ? { affinity } : {}),
  };
}

/** Places `key` with `labels` on `podName` in the index (as a confirmed or assumed Run). */
function place(
  ix: PlacementIndex,
  key: string,
  podName: string,
  labels: Record<string, string>,
  affinity?: Affinity,
) {
  const anti = compiledAffinity(affinity)?.requiredAnti;
  ix.add({
    key: `ns/${key}`,
    namespace: "ns",
    podKey: `ns/${podName}`,
    domain: domainOf(`ns/${podName}`, `u-${podName}`),
    labels,
    ...(anti?.length ? { anti } : {}),
  });
}

const PODS = [pod("a"), pod("b"), pod("c")];

/** Names of the pods the plugin's Filter lets through. */
function feasible(ix: PlacementIndex, r: RunRequest, pods = PODS): string[] {
  const plugin = new RunAffinity();
  const state = new CycleState(ix);
  const pre = plugin.preFilter(state, r);
  if (pre) return [];
  return pods.filter((p) => plugin.filter(state, r, p) === undefined).map((p) => p.name);
}

const fw = builtinRegistry().build(DEFAULT_PROFILE);
const runtime = { key: "ns/rt", capacity: { runs: 4 } };
const cycle = (ix: PlacementIndex, r: RunRequest, pods = PODS) =>
  findPod(fw, new CycleState(ix), r, runtime, pods, 0);

describe("run-affinity Filter: required runAffinity", () => {
  test("only pods holding a matching Run", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "b", { job: "a" });
    expect(feasible(ix, run("r", {}, required({ job: "a" })))).toEqual(["b"]);
  });

  test("every term must hold on the same pod", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "a", { job: "a" });
    place(ix, "y", "b", { job: "a" });
    place(ix, "z", "b", { db: "1" });
    const aff: Affinity = {
      runAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [term({ job: "a" }), term({ db: "1" })],
      },
    };
    expect(feasible(ix, run("r", {}, aff))).toEqual(["b"]);
  });

  test("bootstrap: a Run matching its own term seeds it when no Run matches anywhere", () => {
    const ix = new PlacementIndex();
    expect(feasible(ix, run("r", { job: "a" }, required({ job: "a" })))).toEqual(["a", "b", "c"]);
    // Once one is placed, the others must follow it.
    place(ix, "first", "c", { job: "a" });
    expect(feasible(ix, run("r", { job: "a" }, required({ job: "a" })))).toEqual(["c"]);
  });

  test("a Run that does not match its own term cannot seed: it waits, with the term named", () => {
    const ix = new PlacementIndex();
    place(ix, "other", "a", { job: "b" }); // another job's Run does not help
    const out = cycle(ix, run("r", { role: "follower" }, required({ job: "a" })));
    expect(isPlacement(out)).toBe(false);
    if (!isPlacement(out)) {
      expect(out.status.reason).toBe(Reason.Unschedulable);
      expect(out.status.code).toBe(Code.Unschedulable);
      expect(out.status.message).toStartWith("waiting for a Run matching job=a on the same pod");
    }
  });

  test("the Run itself never satisfies its own term (the index may hold it, e.g. relisted)", () => {
    const ix = new PlacementIndex();
    place(ix, "r", "a", { job: "a" });
    expect(feasible(ix, run("r", { job: "a" }, required({ job: "a" })))).toEqual(["a", "b", "c"]);
    expect(feasible(ix, run("r", { other: "x" }, required({ job: "a" })))).toEqual([]);
  });

  test("when the matching Runs' pod is full the message says both why and where", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "b", { job: "a" });
    const out = cycle(ix, run("r", {}, required({ job: "a" })), [pod("a"), pod("b", 4), pod("c")]);
    expect(!isPlacement(out) && out.status.reason).toBe(Reason.InsufficientCapacity);
    expect(!isPlacement(out) && out.status.message).toBe(
      "0/3 pods can take the Run: 1 insufficient runs, 2 without a Run matching job=a",
    );
  });

  test("all pods without a match: reason Unschedulable, led by what the Run waits for", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "z", { job: "a" }); // a pod of another Runtime holds the only match
    const out = cycle(ix, run("r", { job: "a" }, required({ job: "a" })));
    expect(!isPlacement(out) && out.status.reason).toBe(Reason.Unschedulable);
    expect(!isPlacement(out) && out.status.message).toBe(
      "waiting for a Run matching job=a on the same pod (0/3 pods can take the Run: 3 without a Run matching job=a)",
    );
  });
});

describe("run-affinity Filter: required runAntiAffinity", () => {
  test("pods holding a matching Run are out", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "a", { app: "web" });
    expect(feasible(ix, run("r", { app: "web" }, apart({ app: "web" })))).toEqual(["b", "c"]);
  });

  test("symmetry: a placed Run's anti-affinity keeps matching Runs off its pod", () => {
    const ix = new PlacementIndex();
    place(ix, "db", "a", { tier: "db" }, apart({ tier: "db" }));
    expect(feasible(ix, run("r", { tier: "db" }))).toEqual(["b", "c"]);
    expect(feasible(ix, run("r", { tier: "web" }))).toEqual(["a", "b", "c"]);
  });

  test("every pod taken: Unschedulable with a bounded message", () => {
    const ix = new PlacementIndex();
    for (const p of ["a", "b", "c"]) place(ix, `x-${p}`, p, { app: "web" });
    const out = cycle(ix, run("r", { app: "web" }, apart({ app: "web" })));
    expect(!isPlacement(out) && out.status.reason).toBe(Reason.Unschedulable);
    expect(!isPlacement(out) && out.status.message).toBe(
      "waiting for a pod without a Run matching app=web (0/3 pods can take the Run: 3 with a Run matching app=web (runAntiAffinity))",
    );
  });
});

describe("run-affinity Score: preferred terms", () => {
  const prefer = (labels: Record<string, string>, weight = 100): Affinity => ({
    runAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight, runAffinityTerm: term(labels) }],
    },
  });
  const avoid = (labels: Record<string, string>, weight = 100): Affinity => ({
    runAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight, runAffinityTerm: term(labels) }],
    },
  });

  test("a preferred pod wins over a less loaded one", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "c", { cache: "warm" });
    const out = cycle(ix, run("r", {}, prefer({ cache: "warm" })), [pod("a"), pod("b"), pod("c", 3)]);
    expect(isPlacement(out) && out.pod.name).toBe("c");
  });

  test("preferred anti-affinity spreads: the pod with fewest matching Runs wins", () => {
    const ix = new PlacementIndex();
    place(ix, "x1", "a", { app: "w" });
    place(ix, "x2", "a", { app: "w" });
    place(ix, "x3", "b", { app: "w" });
    const out = cycle(ix, run("r", {}, avoid({ app: "w" })), [
      pod("a", 0, 10),
      pod("b", 0, 10),
      pod("c", 0, 10),
    ]);
    expect(isPlacement(out) && out.pod.name).toBe("c");
  });

  test("scores are normalised 0–100 across feasible pods (kube-scheduler's formula)", () => {
    const plugin = New(undefined);
    const scores = [-50, 0, 150];
    plugin.normalizeScore(new CycleState(), run("r"), scores);
    expect(scores).toEqual([0, 25, 100]);
    const flat = [0, 0];
    plugin.normalizeScore(new CycleState(), run("r"), flat);
    expect(flat).toEqual([0, 0]);
  });

  test("ties go to the smallest pod name", () => {
    const ix = new PlacementIndex();
    place(ix, "x1", "c", { cache: "warm" });
    place(ix, "x2", "b", { cache: "warm" });
    const out = cycle(ix, run("r", {}, prefer({ cache: "warm" })), [pod("c"), pod("b"), pod("a")]);
    expect(isPlacement(out) && out.pod.name).toBe("b");
  });

  test("a Run without preferred terms is not scored by the plugin", () => {
    const plugin = new RunAffinity();
    const state = new CycleState(new PlacementIndex());
    plugin.preFilter(state, run("r", {}, required({ job: "a" })));
    expect(plugin.preScore(state, run("r", {}, required({ job: "a" })))).toBe(false);
  });
});

describe("run-affinity without PreFilter", () => {
  test("Filter called on its own prepares itself (same answers)", () => {
    const ix = new PlacementIndex();
    place(ix, "x", "b", { job: "a" });
    const plugin = new RunAffinity();
    const r = run("r", {}, required({ job: "a" }));
    const state = new CycleState(ix);
    expect(PODS.map((p) => plugin.filter(state, r, p) === undefined)).toEqual([false, true, false]);
  });

  test("New takes no args", () => {
    expect(() => New({ x: 1 })).toThrow();
  });
});
