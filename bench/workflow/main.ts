/**
 * WorkflowRuns end to end: how long from create to Succeeded, and how much of it is the workflow
 * layer rather than the steps' Runs themselves. A controller process for a fresh namespace with
 * the REAL runtimed and Runtime Server (as test/integration/workflows.test.ts), a bash Runtime of
 * `--pods` pods × `--capacity` slots, every step `true` (so the Runs are as short as they get and
 * the overhead shows).
 *
 * Scenarios (each `--rounds` times, one WorkflowRun at a time, after one warm-up run):
 * - `linear`: 1 job × 20 steps — sequential steps in one job workspace (one pod).
 * - `chain`: 20 jobs × 1 step, each job `needs` the previous — a workspace per job.
 * - `fanout`: 10 independent jobs × 10 steps each, in parallel (100 steps).
 *
 * Timestamps: a watch on the namespace's Runs records when each child Run is first seen
 * (≈ created); runtimed's `status.timing.reportedMicros` is when it wrote the terminal status;
 * a watch on WorkflowRuns records when the run is first seen Succeeded. Everything runs on this
 * one host, so the clocks are the same.
 * - wall: client create → Succeeded seen;
 * - Run: a step's Run, seen → reported (what the step costs as a plain Run);
 * - critical path: the sum of the Run times along the longest job (linear/chain: all steps;
 *   fanout: the slowest job's 10);
 * - overhead per step: (wall − critical path) / steps on the critical path;
 * - gap: previous step's Run reported → next step's Run seen (the controller noticing the end,
 *   evaluating, creating the next Run), and the ends: create → first Run seen, last Run reported
 *   → Succeeded seen;
 * - status writes: the WorkflowRun's MODIFIED events until it ended (the controller's status
 *   writes; one reconcile at a time per WorkflowRun, so a step's end waits behind them).
 * Usage: KUBECONFIG=… bun bench/workflow/main.ts [--rounds 5] [--scenarios linear,chain,fanout]
 *        [--pods 2] [--capacity 8] [--out bench/results/workflow-<date>.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  type PersistentWorkspace,
  type Run,
  RunResource,
  type Runtime,
  type WorkflowJob,
  type WorkflowRun,
  WorkflowRunResource,
  WorkspaceResource,
} from "@kruntimes/api";
import { KubeClient, loadKubeconfigFile, path, watchStream } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, getRuntime, installCrds } from "../../controller/testing/cluster/objects.ts";
import { eventually, testNamespace } from "../../test/support/cluster.ts";
import { clusterInfo, machineInfo } from "../hotpath/machine.ts";

const kubeconfig = process.env.KUBECONFIG;
if (!kubeconfig) {
  console.error("error: set KUBECONFIG to the cluster to benchmark (the local cluster: its node agent)");
  process.exit(78);
}
const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    scenarios: { type: "string", default: "linear,chain,fanout" },
    pods: { type: "string", default: "2" },
    capacity: { type: "string", default: "8" },
    out: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const pods = Number(values.pods);
const capacity = Number(values.capacity);
for (const [k, v] of [
  ["--rounds", rounds],
  ["--pods", pods],
  ["--capacity", capacity],
] as const) {
  if (!Number.isInteger(v) || v < 1) {
    console.error(`error: ${k} must be a positive integer`);
    process.exit(64);
  }
}

interface Scenario {
  name: string;
  describe: string;
  jobs: Record<string, WorkflowJob>;
  /** Jobs whose steps form the critical path candidates: each list is one path. */
  paths: string[][];
}

const step = (i: number) => ({ name: `s${i}`, run: "true" });
const SCENARIOS: Record<string, () => Scenario> = {
  linear: () => ({
    name: "linear",
    describe: "1 job × 20 steps",
    jobs: { main: { steps: Array.from({ length: 20 }, (_, i) => step(i)) } },
    paths: [["main"]],
  }),
  chain: () => {
    const jobs: Record<string, WorkflowJob> = {};
    for (let i = 0; i < 20; i++) jobs[`j${i}`] = { ...(i ? { needs: [`j${i - 1}`] } : {}), steps: [step(0)] };
    return {
      name: "chain",
      describe: "20 jobs × 1 step, chained by needs",
      jobs,
      paths: [Object.keys(jobs)],
    };
  },
  fanout: () => {
    const jobs: Record<string, WorkflowJob> = {};
    for (let i = 0; i < 10; i++) jobs[`j${i}`] = { steps: Array.from({ length: 10 }, (_, k) => step(k)) };
    return {
      name: "fanout",
      describe: "10 parallel jobs × 10 steps",
      jobs,
      paths: Object.keys(jobs).map((j) => [j]),
    };
  },
};
const chosen = (values.scenarios ?? "").split(",").map((s) => {
  const f = SCENARIOS[s.trim()];
  if (!f) {
    console.error(`error: unknown scenario ${s} (known: ${Object.keys(SCENARIOS).join(", ")})`);
    process.exit(64);
  }
  return f();
});

const client = new KubeClient(loadKubeconfigFile(kubeconfig));
await installCrds(client);
const ns = await testNamespace(client, "krt-bench-workflow");
const ctl = startController({ namespace: ns.name, kubeconfig, runtimed: "real" });

/** First time each Run was seen, and each WorkflowRun seen terminal (ms since the epoch). */
const runSeen = new Map<string, number>();
const wfEnded = new Map<string, { at: number; phase: string }>();
/** WorkflowRun writes seen (MODIFIED events: the controller's status writes, one each). */
const wfWrites = new Map<string, number>();
const stop = new AbortController();
async function watchAll<T extends { metadata: { name?: string } }>(
  res: typeof RunResource | typeof WorkflowRunResource,
  on: (type: string, o: T) => void,
) {
  while (!stop.signal.aborted) {
    try {
      for await (const e of watchStream<T & { metadata: { name: string } }>(
        client,
        path(res, ns.name),
        {},
        stop.signal,
      ))
        on(e.type, e.object);
    } catch (e) {
      if (!stop.signal.aborted) console.error(`watch ended: ${(e as Error).message}; again`);
    }
  }
}
void watchAll<Run>(RunResource, (type, r) => {
  const n = r.metadata.name ?? "";
  if (type === "ADDED" && !runSeen.has(n)) runSeen.set(n, Date.now());
});
void watchAll<WorkflowRun>(WorkflowRunResource, (type, w) => {
  const p = w.status?.phase;
  const n = w.metadata.name ?? "";
  if (type === "MODIFIED" && !wfEnded.has(n)) wfWrites.set(n, (wfWrites.get(n) ?? 0) + 1);
  if ((p === "Succeeded" || p === "Failed" || p === "Cancelled") && !wfEnded.has(n))
    wfEnded.set(n, { at: Date.now(), phase: p });
});

interface Round {
  wallMs: number;
  /** status.completionTime − status.startTime (the controller's own clock, ms). */
  controllerMs: number;
  steps: number;
  runMsMedian: number;
  /** The Run's own stages, p50: seen → scheduled, scheduled → started, started → reported. */
  scheduleMsMedian: number;
  dispatchMsMedian: number;
  executeMsMedian: number;
  runMsSum: number;
  criticalPathMs: number;
  criticalSteps: number;
  overheadPerStepMs: number;
  gapMsMedian: number;
  gapMsP90: number;
  startMs: number;
  endMs: number;
  /** Status writes of the WorkflowRun until it ended, and per step. */
  statusWrites: number;
  statusWritesPerStep: number;
  /** Consecutive child Runs (all jobs, by time seen): p50 spacing. Creates the controller makes one after another in a reconcile are this far apart. */
  seenSpacingMsMedian: number;
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor(p * s.length))] as number) : Number.NaN;
};
const r1 = (x: number) => Math.round(x * 10) / 10;

async function runOnce(sc: Scenario, name: string): Promise<Round> {
  const t0 = Date.now();
  await client.create(path(WorkflowRunResource, ns.name), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "WorkflowRun",
    metadata: { name },
    spec: { runtime: "bash", jobs: sc.jobs },
  });
  const end = await eventually(`${name} ended`, async () => wfEnded.get(name), 300_000);
  if (end.phase !== "Succeeded") {
    // Say why, and what the job workspaces look like now (the message may blame them).
    const w = await client.get<WorkflowRun>(path(WorkflowRunResource, ns.name, name));
    const wss = await client.list<PersistentWorkspace>(path(WorkspaceResource, ns.name), {
      labelSelector: `kruntimes.io/workflowrun=${name}`,
    });
    const shown = wss.items.map(
      (x) =>
        `${x.metadata.name} ${x.status?.phase ?? "-"}${x.metadata.deletionTimestamp ? " (deleting)" : ""}`,
    );
    throw new Error(
      `${name} ended ${end.phase} (${w.status?.reason}): ${w.status?.message}; its workspaces now: ${shown.join(", ") || "none"}`,
    );
  }
  const w = await client.get<WorkflowRun>(path(WorkflowRunResource, ns.name, name));
  const runs = new Map(
    (
      await client.list<Run>(path(RunResource, ns.name), {
        labelSelector: `kruntimes.io/workflowrun=${name}`,
      })
    ).items.map((r) => [r.metadata.name ?? "", r]),
  );
  const runMs: number[] = [];
  const stages: { schedule: number[]; dispatch: number[]; execute: number[] } = {
    schedule: [],
    dispatch: [],
    execute: [],
  };
  const gaps: number[] = [];
  const pathMs: number[] = [];
  let firstSeen = Number.POSITIVE_INFINITY;
  let lastReported = 0;
  const stepsOf = (job: string) =>
    (w.status?.jobs?.[job]?.steps ?? []).map((s) => {
      const r = runs.get(s.run ?? "");
      const seen = runSeen.get(s.run ?? "");
      const t = r?.status?.timing;
      const reported = (t?.reportedMicros ?? 0) / 1000;
      if (!r || seen === undefined || !reported) throw new Error(`step ${job}/${s.name}: no Run timing`);
      const scheduled = (t?.scheduledMicros ?? 0) / 1000;
      const started = (t?.startedMicros ?? 0) / 1000;
      return { seen, scheduled, started, reported };
    });
  for (const job of Object.keys(sc.jobs)) {
    const ss = stepsOf(job);
    ss.forEach((s, i) => {
      runMs.push(s.reported - s.seen);
      stages.schedule.push(s.scheduled - s.seen);
      stages.dispatch.push(s.started - s.scheduled);
      stages.execute.push(s.reported - s.started);
      if (i > 0) gaps.push(s.seen - (ss[i - 1] as { reported: number }).reported);
      firstSeen = Math.min(firstSeen, s.seen);
      lastReported = Math.max(lastReported, s.reported);
    });
  }
  // Between chained jobs the gap is from the upstream job's last step to the next job's first.
  if (sc.name === "chain") {
    const order = sc.paths[0] as string[];
    for (let i = 1; i < order.length; i++) {
      const prev = stepsOf(order[i - 1] as string).at(-1);
      const next = stepsOf(order[i] as string)[0];
      if (prev && next) gaps.push(next.seen - prev.reported);
    }
  }
  let criticalSteps = 0;
  for (const p of sc.paths) {
    const ss = p.flatMap(stepsOf);
    const ms = ss.reduce((a, s) => a + (s.reported - s.seen), 0);
    pathMs.push(ms);
    if (ms === Math.max(...pathMs)) criticalSteps = ss.length;
  }
  const wallMs = end.at - t0;
  const criticalPathMs = Math.max(...pathMs);
  return {
    wallMs,
    controllerMs: Date.parse(w.status?.completionTime ?? "") - Date.parse(w.status?.startTime ?? ""),
    steps: runMs.length,
    runMsMedian: r1(q(runMs, 0.5)),
    scheduleMsMedian: r1(q(stages.schedule, 0.5)),
    dispatchMsMedian: r1(q(stages.dispatch, 0.5)),
    executeMsMedian: r1(q(stages.execute, 0.5)),
    runMsSum: Math.round(runMs.reduce((a, b) => a + b, 0)),
    criticalPathMs: Math.round(criticalPathMs),
    criticalSteps,
    overheadPerStepMs: r1((wallMs - criticalPathMs) / criticalSteps),
    gapMsMedian: r1(q(gaps, 0.5)),
    gapMsP90: r1(q(gaps, 0.9)),
    startMs: Math.round(firstSeen - t0),
    endMs: Math.round(end.at - lastReported),
    seenSpacingMsMedian: r1(
      q(
        [...runs.keys()]
          .map((n) => runSeen.get(n) ?? 0)
          .sort((a, b) => a - b)
          .flatMap((t, i, a) => (i ? [t - (a[i - 1] as number)] : [])),
        0.5,
      ),
    ),
    statusWrites: wfWrites.get(name) ?? 0,
    statusWritesPerStep: r1((wfWrites.get(name) ?? 0) / runMs.length),
  };
}

const results: Record<string, { describe: string; rounds: Round[] }> = {};
try {
  await ctl.waitFor("scheduling and reconciling");
  await createRuntime(client, ns.name, {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Runtime",
    metadata: { name: "bash" },
    spec: {
      replicas: pods,
      capacity: { runs: capacity },
      template: {
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [{ name: "runtime", image: "ghcr.io/kruntimes/bash" }],
        },
      },
    },
  } as Runtime);
  await eventually(
    `Runtime bash: ${pods} pods available`,
    async () => (await getRuntime(client, ns.name, "bash")).status?.availableReplicas === pods,
    180_000,
  );
  await runOnce(SCENARIOS.linear?.() as Scenario, "warmup");
  for (const sc of chosen) {
    const rs: Round[] = [];
    for (let i = 0; i < rounds; i++) {
      const r = await runOnce(sc, `${sc.name}-${i}`);
      rs.push(r);
      console.error(
        `${sc.name} #${i}: wall ${r.wallMs} ms, critical path ${r.criticalPathMs} ms over ${r.criticalSteps} steps, overhead ${r.overheadPerStepMs} ms/step, gap p50 ${r.gapMsMedian} ms, Run p50 ${r.runMsMedian} ms (schedule ${r.scheduleMsMedian}, dispatch ${r.dispatchMsMedian}, execute+report ${r.executeMsMedian}), ${r.statusWrites} status writes, Runs seen ${r.seenSpacingMsMedian} ms apart (p50)`,
      );
      // One at a time: the finished run's children go before the next starts.
      await client.delete(path(WorkflowRunResource, ns.name, `${sc.name}-${i}`)).catch(() => {});
      await eventually(
        `${sc.name}-${i}'s Runs deleted`,
        async () =>
          (
            await client.list<Run>(path(RunResource, ns.name), {
              labelSelector: `kruntimes.io/workflowrun=${sc.name}-${i}`,
            })
          ).items.length === 0,
        120_000,
      );
    }
    results[sc.name] = { describe: sc.describe, rounds: rs };
  }
} finally {
  stop.abort();
  ctl.kill();
  await ctl.exited;
  await ns.remove().catch(() => {});
}

const med = (rs: Round[], k: keyof Round) =>
  r1(
    q(
      rs.map((r) => r[k]),
      0.5,
    ),
  );
const header =
  "| scenario | steps | wall p50 (ms) | critical path p50 (ms) | overhead / step p50 (ms) | step gap p50 / p90 (ms) | step Run p50 (ms) | create → first Run (ms) | last Run → Succeeded (ms) | status writes / step |";
console.log(header);
console.log(`|${"---|".repeat(10)}`);
for (const [name, { describe, rounds: rs }] of Object.entries(results)) {
  console.log(
    `| ${name} (${describe}) | ${rs[0]?.steps} | ${med(rs, "wallMs")} | ${med(rs, "criticalPathMs")} | ${med(rs, "overheadPerStepMs")} | ${med(rs, "gapMsMedian")} / ${med(rs, "gapMsP90")} | ${med(rs, "runMsMedian")} | ${med(rs, "startMs")} | ${med(rs, "endMs")} | ${med(rs, "statusWritesPerStep")} |`,
  );
}
const out = values.out ?? `bench/results/workflow-${new Date().toISOString().slice(0, 10)}.json`;
writeFileSync(
  out,
  `${JSON.stringify(
    {
      machine: machineInfo(),
      cluster: await clusterInfo(client),
      parameters: { rounds, pods, capacity, step: "true", controller: "process, --namespace scope" },
      results,
    },
    null,
    2,
  )}\n`,
);
console.error(`wrote ${out}`);
