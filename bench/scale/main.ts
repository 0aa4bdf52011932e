#!/usr/bin/env bun
/**
 * Scale: N Runs (10,000 unless told) submitted in one burst against a bash Runtime of P pods
 * (20) spread over the node agents (2) of a local cluster of its own, the controller with the
 * real runtimed under it. Each Run is a no-op that appends `<name> <attempt>` to a ledger file
 * on the host (Runtime pods of the local cluster are host processes).
 *
 * Every second: Runs Pending / Scheduled+Running / Succeeded / Failed (counted from a watch,
 * never by listing), the controller's RSS (/proc) and heap (its /metrics), the scheduler's own
 * metrics (queue depth, binds in flight, queued Runs that free capacity could take, time in
 * cycles), and CPU seconds per process group of this cluster (task-path's groups) and of the
 * machine. Verdicts: all N Succeeded, none lost (every name in the ledger, every Run in the
 * API), none doubled (no name twice in the ledger), controller RSS ≤ 200 MiB, and whether the
 * scheduler kept up (busy share, pending Runs that fitted). The report (.md) has a compact
 * table; the full series goes into a .json beside it.
 *
 *   bun bench/scale/main.ts [--runs 10000] [--pods 20] [--slots 8] [--nodes 2] [--concurrency 64]
 *                           [--sample-ms 1000] [--table-seconds 5] [--timeout-minutes 45]
 *                           [--cluster-dir /tmp/krt-scale] [--pod-ip-range 127.5.0.0/16]
 *                           [--heartbeat-flowschema] [--out bench/results/scale-<date>.md]
 *
 * --heartbeat-flowschema: an experiment — a FlowSchema puts runtimed's heartbeat Lease requests
 * in API Priority and Fairness's `leader-election` priority level instead of `workload-low`,
 * where every other request of a service account (the Run status writes) queues.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, homedir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { Informer, isConflict, type KubeClient, path } from "@kruntimes/kube";
import type { Pod } from "../../controller/kube-types.ts";
import {
  type ControllerProcess,
  installedWaitingReasonFlags,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import { testNamespace } from "../../test/support/cluster.ts";
import { OwnCluster } from "../../test/support/own-cluster.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { diffRequestCosts, parseRequestCosts } from "../task-path/cost.ts";
import { judgeLedger } from "./ledger.ts";
import { CpuAccount, machineCpu, NOT_OURS, REAPED, scanProc } from "./procs.ts";
import {
  compactRows,
  diffBy,
  metricValue,
  PhaseTally,
  quantile,
  type Sample,
  schedulerFromMetrics,
  sumBy,
  summarize,
} from "./series.ts";

const REPO = resolve(import.meta.dir, "../..");
const { values: a } = parseArgs({
  options: {
    runs: { type: "string", default: "10000" },
    pods: { type: "string", default: "20" },
    slots: { type: "string", default: "8" },
    nodes: { type: "string", default: "2" },
    concurrency: { type: "string", default: "64" },
    "sample-ms": { type: "string", default: "1000" },
    "table-seconds": { type: "string", default: "5" },
    "timeout-minutes": { type: "string", default: "45" },
    "cluster-dir": { type: "string", default: "/tmp/krt-scale" },
    "pod-ip-range": { type: "string", default: "127.5.0.0/16" },
    "heartbeat-flowschema": { type: "boolean", default: false },
    out: { type: "string" },
  },
});
const runs = Number(a.runs);
const pods = Number(a.pods);
const slots = Number(a.slots);
const nodes = Number(a.nodes);
const concurrency = Number(a.concurrency);
const sampleMs = Number(a["sample-ms"]);
const tableSeconds = Number(a["table-seconds"]);
const timeoutMs = Number(a["timeout-minutes"]) * 60_000;
const dir = resolve(a["cluster-dir"] as string);
const heartbeatFlowSchema = a["heartbeat-flowschema"] === true;
const MiB = 1024 * 1024;
const RSS_LIMIT = 200 * MiB;
const mib = (b: number) => (b / MiB).toFixed(1);
const pct = (x: number) => `${(100 * x).toFixed(x < 0.1 ? 2 : 0)} %`;
const log = (s: string) => process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

for (const [k, v] of Object.entries({ runs, pods, slots, nodes, concurrency, sampleMs, tableSeconds }))
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${k} must be a positive integer, got ${v}`);

/** The control plane's binaries must exist: `up` would otherwise start a long build. */
function checkBinaries(): void {
  if (process.env.KRT_ASSETS) return;
  const versions = readFileSync(join(REPO, "test/localcluster/build/versions.env"), "utf8");
  const v = (name: string) => new RegExp(`^${name}=(\\S+)`, "m").exec(versions)?.[1];
  const cache =
    process.env.KRT_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "kruntimes");
  const missing = [`kubernetes-${v("KUBERNETES_VERSION")}`, `etcd-${v("ETCD_VERSION")}`].filter(
    (d) => !existsSync(join(cache, "bin", d, ".complete")),
  );
  if (missing.length > 0) {
    console.error(
      `scale: the local cluster's binaries are missing (${missing.map((d) => join(cache, "bin", d)).join(", ")}).\n` +
        "Build them first (about 20 minutes on 2 cores): bash test/localcluster/build/build-binaries.sh\n" +
        "or point KRT_ASSETS at a directory of prebuilt etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl.",
    );
    process.exit(2);
  }
}
checkBinaries();
if (existsSync(join(dir, "cluster.json"))) {
  const pid = (JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8")) as { pid: number }).pid;
  let alive = false;
  try {
    process.kill(pid, 0);
    alive = true;
  } catch {}
  if (alive) {
    console.error(
      `scale: a local cluster is already running in ${dir}; bring it down first: KRT_CLUSTER_DIR=${dir} bun test/localcluster/main.ts down`,
    );
    process.exit(2);
  }
}

// ---- cleanup on every way out ----
let cluster: OwnCluster | undefined;
let ctl: ControllerProcess | undefined;
let informer: Informer<Run> | undefined;
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    informer?.stop();
    if (ctl) {
      ctl.kill("SIGKILL");
      await ctl.exited;
    }
    log("bringing the cluster down");
    if (cluster) await cluster.down();
    else
      Bun.spawnSync(["bun", "test/localcluster/main.ts", "down"], {
        cwd: REPO,
        env: { ...process.env, KRT_CLUSTER_DIR: dir },
        stdout: "ignore",
        stderr: "inherit",
      });
  })();
  return cleaning;
}
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });

const loadBefore = readFileSync("/proc/loadavg", "utf8").trim();
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB; Bun ${Bun.version}`;
let exitCode = 0;
try {
  log(`local cluster with ${nodes} node(s) in ${dir} (pod range ${a["pod-ip-range"]})`);
  process.env.KRT_NODES = String(nodes);
  const t0up = Date.now();
  cluster = await OwnCluster.up({ dir, podIpRange: a["pod-ip-range"] as string, prefix: "krt-scale-" });
  log(`cluster up in ${((Date.now() - t0up) / 1000).toFixed(0)} s`);
  const client: KubeClient = cluster.client;
  await installCrds(client);
  const ns = (await testNamespace(client, "scale")).name;
  ctl = startController({
    namespace: ns,
    kubeconfig: cluster.kubeconfig,
    runtimed: "real",
    // The controller's own defaults where the test helper shortens them (waiting-reason writes
    // after 1 s, InsufficientCapacity after 10 s — with a backlog of thousands that is thousands
    // of writes —, a Run Scheduled 30 s without starting taken back, Lease renewal every 1 s).
    flags: [
      "--identity=scale",
      ...installedWaitingReasonFlags(),
      "--scheduled-start-timeout=30s",
      "--leader-retry-period=1s",
    ],
  });
  let ctlExit: number | undefined;
  void ctl.exited.then((c) => {
    ctlExit = c;
  });
  const ctlPort = await ctl.metricsPort();
  await ctl.waitFor("scheduling and reconciling", 60_000);
  const ctlMetrics = async () => (await fetch(`http://127.0.0.1:${ctlPort}/metrics`)).text();

  // The Runtime: `pods` pods, spread evenly over the nodes.
  const rt = imageRuntime("bash", "ghcr.io/kruntimes/bash", { replicas: pods, runs: slots });
  const podSpec = rt.spec.template.spec as { topologySpreadConstraints?: unknown[] };
  podSpec.topologySpreadConstraints = [
    {
      maxSkew: 1,
      topologyKey: "kubernetes.io/hostname",
      whenUnsatisfiable: "DoNotSchedule",
      labelSelector: { matchLabels: { "kruntimes.io/runtime": "bash" } },
    },
  ];
  if (heartbeatFlowSchema) {
    // runtimed's service account (`<runtime>-runtimed`) renewing its Leases: leader-election level.
    await client.create("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", {
      apiVersion: "flowcontrol.apiserver.k8s.io/v1",
      kind: "FlowSchema",
      metadata: { name: "kruntimes-runtimed-heartbeats" },
      spec: {
        priorityLevelConfiguration: { name: "leader-election" },
        matchingPrecedence: 500,
        distinguisherMethod: { type: "ByUser" },
        rules: [
          {
            subjects: [{ kind: "ServiceAccount", serviceAccount: { name: "bash-runtimed", namespace: ns } }],
            resourceRules: [
              {
                verbs: ["get", "create", "update", "patch"],
                apiGroups: ["coordination.k8s.io"],
                resources: ["leases"],
                namespaces: [ns],
              },
            ],
          },
        ],
      },
    });
    log(
      "FlowSchema kruntimes-runtimed-heartbeats: runtimed's Lease requests → priority level leader-election",
    );
  }
  await createRuntime(client, ns, rt);
  const t0pods = Date.now();
  for (let lastLog = Date.now(); ; await Bun.sleep(1000)) {
    const r = await client.get<Runtime>(path(RuntimeResource, ns, "bash")).catch(() => undefined);
    const available = r?.status?.availableReplicas ?? 0;
    if (available >= pods) break;
    if (Date.now() - t0pods > 600_000)
      throw new Error(`only ${available} of ${pods} Runtime pods available after 10 min`);
    if (Date.now() - lastLog >= 10_000) {
      lastLog = Date.now();
      log(`Runtime pods: ready ${r?.status?.readyReplicas ?? 0}, available ${available} of ${pods}`);
    }
  }
  const podList = await readyPods(client, ns, "bash");
  const placement: Record<string, string[]> = {};
  for (const p of podList as Pod[]) {
    const node = p.spec?.nodeName ?? "?";
    placement[node] = [...(placement[node] ?? []), p.metadata.name as string];
  }
  const placementText = Object.entries(placement)
    .sort()
    .map(([node, names]) => `${node}: ${names.length} pods (${names.sort().join(", ")})`);
  log(
    `${podList.length} pods available in ${((Date.now() - t0pods) / 1000).toFixed(0)} s; ${Object.entries(
      placement,
    )
      .map(([n, x]) => `${n} ${x.length}`)
      .join(", ")}`,
  );

  // The watch the counts come from.
  const tally = new PhaseTally();
  let benchRelists = 0;
  const endedAt = new Map<string, number>();
  const observe = (r: Run) => {
    const name = r.metadata.name as string;
    const b = tally.set(name, r.status?.phase);
    if ((b === "succeeded" || b === "failed") && !endedAt.has(name)) endedAt.set(name, performance.now());
  };
  informer = new Informer<Run>(client, path(RunResource, ns)).on({
    add: observe,
    update: observe,
    delete: (r) => tally.remove(r.metadata.name as string),
    relisted: () => {
      benchRelists++;
      log("the benchmark's Run watch expired and relisted");
    },
    error: (e) => log(`watch error: ${String(e).slice(0, 200)}`),
  });
  informer.start();
  await informer.waitForSync();

  const ledger = join(dir, "ledger");
  writeFileSync(ledger, "");
  const width = String(runs - 1).length;
  const names = Array.from({ length: runs }, (_, i) => `scale-${String(i).padStart(width, "0")}`);
  const createdAt = new Map<string, number>();
  const script = `echo "$KRUNTIME_RUN_NAME $KRUNTIME_ATTEMPT" >> ${ledger}`;

  // Baselines.
  const apiserverMetrics = async () =>
    (await client.request<Response>("GET", "/metrics", { raw: true, timeoutMs: 60_000 })).text();
  const runtimedMetrics = async () =>
    (
      await Promise.all(
        (podList as Pod[]).map((p) =>
          fetch(`http://${p.status?.podIP}:8081/metrics`)
            .then((r) => r.text())
            .catch(() => ""),
        ),
      )
    ).join("\n");
  const rtText0 = await runtimedMetrics();
  const apiText0 = await apiserverMetrics();
  const costsBefore = parseRequestCosts(apiText0);
  const roots = new Map<number, string>([
    [cluster.info.pid, "local cluster supervisor"],
    [ctl.pid, "kruntimes controller"],
    [process.pid, "scale bench (client)"],
  ]);
  const cpu = new CpuAccount(scanProc(), roots);
  const machine0 = machineCpu(readFileSync("/proc/stat", "utf8"));

  const samples: Sample[] = [];
  let created = 0;
  let createRetries = 0;
  let createFailures = 0;
  let alreadyExisted = 0;
  const started = performance.now();
  const takeSample = async (): Promise<Sample> => {
    const text = await ctlMetrics().catch(() => "");
    let rssLine: RegExpExecArray | null = null;
    try {
      rssLine = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${ctl?.pid}/status`, "utf8"));
    } catch {
      // the controller is gone: the loop below stops
    }
    cpu.update(scanProc());
    const m = machineCpu(readFileSync("/proc/stat", "utf8"));
    return {
      t: (performance.now() - started) / 1000,
      created,
      counts: tally.snapshot(),
      controller: {
        rssBytes: Number(rssLine?.[1] ?? 0) * 1024,
        heapBytes: metricValue(text, "nodejs_heap_size_used_bytes"),
      },
      scheduler: schedulerFromMetrics(text),
      cpu: cpu.seconds(),
      rss: cpu.rssBytes(),
      machine: {
        busySeconds: m.busySeconds - machine0.busySeconds,
        totalSeconds: m.totalSeconds - machine0.totalSeconds,
      },
    };
  };
  samples.push(await takeSample());
  log(
    `burst: ${runs} Runs, ${concurrency} creates in flight, against ${pods} pods × ${slots} slots (namespace ${ns})`,
  );

  // The burst.
  let next = 0;
  const creates = Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < runs) {
        const name = names[next++] as string;
        createdAt.set(name, performance.now());
        for (let attempt = 0; ; attempt++) {
          try {
            await client.create(path(RunResource, ns), {
              apiVersion: "kruntimes.io/v1alpha1",
              kind: "Run",
              metadata: { name },
              spec: { runtime: "bash", mode: { task: {} }, source: { inline: script } },
            });
            break;
          } catch (e) {
            // A retried create whose first try landed: the Run exists once, by its name.
            if (attempt > 0 && isConflict(e)) {
              alreadyExisted++;
              break;
            }
            if (attempt >= 20) {
              createFailures++;
              log(`create ${name} failed for good: ${String(e).slice(0, 200)}`);
              break;
            }
            createRetries++;
            await Bun.sleep(Math.min(5000, 100 * 2 ** attempt));
          }
        }
        created++;
      }
    }),
  );

  // Sampling until every Run ended (or the timeout).
  const deadline = Date.now() + timeoutMs;
  let lastLog = 0;
  for (;;) {
    await Bun.sleep(Math.max(0, started + samples.length * sampleMs - performance.now()));
    const s = await takeSample();
    samples.push(s);
    const done = s.counts.succeeded + s.counts.failed;
    if (s.t - lastLog >= 5 || done >= runs) {
      lastLog = s.t;
      const prev = samples[Math.max(0, samples.length - 6)] as Sample;
      const rate = (done - prev.counts.succeeded - prev.counts.failed) / Math.max(1e-9, s.t - prev.t);
      const share = (g: string) =>
        (((s.cpu[g] ?? 0) - (prev.cpu[g] ?? 0)) / Math.max(1e-9, s.t - prev.t)) * 100;
      log(
        `t=${s.t.toFixed(0)}s created ${s.created}/${runs}, Pending ${s.counts.pending}, Scheduled/Running ${s.counts.running}, Succeeded ${s.counts.succeeded}, Failed ${s.counts.failed} (${rate.toFixed(1)}/s), terminal flips ${tally.flips.length}; ` +
          `controller rss ${mib(s.controller.rssBytes)} MiB heap ${mib(s.controller.heapBytes)} MiB; queue a/p/b ${s.scheduler.active}/${s.scheduler.parked}/${s.scheduler.backoff}, fits ${s.scheduler.pendingThatFits}, binds ${s.scheduler.bindsInFlight}, held ${s.scheduler.held}; ` +
          `CPU % apiserver ${share("kube-apiserver").toFixed(0)} etcd ${share("etcd").toFixed(0)} controller ${share("kruntimes controller").toFixed(0)} runtimed ${share("runtimed").toFixed(0)} Runtime Server ${share("Runtime Server").toFixed(0)} not ours ${share(NOT_OURS).toFixed(0)}`,
      );
    }
    if (s.created >= runs && done >= runs) break;
    if (ctlExit !== undefined) throw new Error(`the controller exited (${ctlExit}); log: ${ctl.logFile}`);
    if (Date.now() > deadline) {
      log(`timeout: ${runs - done} Runs not ended after ${a["timeout-minutes"]} minutes`);
      break;
    }
  }
  await creates;
  const loadAfter = readFileSync("/proc/loadavg", "utf8").trim();
  const apiText1 = await apiserverMetrics();
  const rtText1 = await runtimedMetrics();
  const ctlText1 = await ctlMetrics().catch(() => "");
  const recovery = sumBy(ctlText1, "kruntimes_recovery_total", ["reason", "action"]);
  const renewals = diffBy(
    sumBy(rtText0, "kruntimes_runtimed_lease_renewals_total", ["result"]),
    sumBy(rtText1, "kruntimes_runtimed_lease_renewals_total", ["result"]),
  );
  const statusWrites = diffBy(
    sumBy(rtText0, "kruntimes_runtimed_status_writes_total", ["kind", "result"]),
    sumBy(rtText1, "kruntimes_runtimed_status_writes_total", ["kind", "result"]),
  );
  // API Priority and Fairness: time requests queued before they ran, by priority level.
  const apf = (text: string, what: "sum" | "count" | "bucket") =>
    sumBy(
      text,
      `apiserver_flowcontrol_request_wait_duration_seconds_${what}`,
      what === "bucket" ? ["priority_level", "le"] : ["priority_level"],
      { execute: "true" },
    );
  const apfSum = diffBy(apf(apiText0, "sum"), apf(apiText1, "sum"));
  const apfCount = diffBy(apf(apiText0, "count"), apf(apiText1, "count"));
  const apfBuckets = diffBy(apf(apiText0, "bucket"), apf(apiText1, "bucket"));
  const apfRows = [...apfCount]
    .sort((x, y) => (apfSum.get(y[0]) ?? 0) - (apfSum.get(x[0]) ?? 0))
    .map(([level, count]) => {
      const over = (le: string) => count - (apfBuckets.get(`${level}/${le}`) ?? 0);
      return {
        level,
        count,
        meanMs: (1000 * (apfSum.get(level) ?? 0)) / count,
        over1s: over("1"),
        over5s: over("5"),
      };
    });
  const costs = diffRequestCosts(costsBefore, parseRequestCosts(apiText1));
  // Signs of an apiserver past its limit: watchers it closed for falling behind, requests APF refused.
  const apiCounter = (name: string) => metricValue(apiText1, name, "*") - metricValue(apiText0, name, "*");
  const byResource = (text: string) => {
    const m = new Map<string, number>();
    for (const x of text.matchAll(
      /^apiserver_terminated_watchers_total\{[^}]*resource="([^"]*)"[^}]*\} (\S+)$/gm,
    ))
      m.set(x[1] as string, (m.get(x[1] as string) ?? 0) + Number(x[2]));
    return m;
  };
  const tw0 = byResource(apiText0);
  const terminatedByResource = Object.fromEntries(
    [...byResource(apiText1)]
      .map(([r, n]) => [r, n - (tw0.get(r) ?? 0)])
      .filter(([, n]) => (n as number) > 0),
  );
  const apiStress = {
    terminatedWatchers: apiCounter("apiserver_terminated_watchers_total"),
    terminatedByResource,
    flowcontrolRejected: apiCounter("apiserver_flowcontrol_rejected_requests_total"),
  };

  // Verdicts: the API's final word (one list), the ledger, the series.
  const list = await client.list<Run>(path(RunResource, ns));
  const byName = new Map(list.items.map((r) => [r.metadata.name as string, r]));
  const notInApi = names.filter((n) => !byName.has(n));
  const phases: Record<string, number> = {};
  const notSucceeded: string[] = [];
  const attempts: Record<string, number> = {};
  for (const n of names) {
    const r = byName.get(n);
    if (!r) continue;
    const p = r.status?.phase ?? "(none)";
    phases[p] = (phases[p] ?? 0) + 1;
    if (p !== "Succeeded")
      notSucceeded.push(`${n}: ${p}/${r.status?.reason ?? ""} ${r.status?.message ?? ""}`);
    const at = String(r.status?.attempt ?? 0);
    attempts[at] = (attempts[at] ?? 0) + 1;
  }
  const lv = judgeLedger(readFileSync(ledger, "utf8"), names);
  const sum = summarize(samples, runs);
  const latencies = names
    .map((n) => (endedAt.get(n) ?? Number.NaN) - (createdAt.get(n) ?? Number.NaN))
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  const ms = (q: number) => (quantile(latencies, q) / 1000).toFixed(2);

  // The controller's warnings and errors, by message.
  const ctlWarnings = new Map<string, number>();
  for (const line of ctl.log().split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const j = JSON.parse(line) as { level?: number; msg?: string };
      if ((j.level ?? 0) >= 40) ctlWarnings.set(j.msg ?? "?", (ctlWarnings.get(j.msg ?? "?") ?? 0) + 1);
    } catch {}
  }
  const sc = sum.scheduler;
  const ok = {
    allSucceeded: (phases.Succeeded ?? 0) === runs,
    noneLost: notInApi.length === 0 && lv.missing.length === 0 && createFailures === 0,
    noneDoubled: lv.doubled.length === 0 && lv.retried.length === 0,
    terminalPhasesFinal: tally.flips.length === 0,
    rss: sum.controllerRssMax <= RSS_LIMIT,
    schedulerDecisionsNotTheBottleneck:
      sc.busyShare < 0.05 && sc.maxIntervalBusyShare < 0.25 && sc.fitsWhileBindSlotsFreeShare < 0.05,
  };
  if (!Object.values(ok).every(Boolean)) exitCode = 1;
  const v = (b: boolean) => (b ? "**yes**" : "**NO**");
  const capacity = pods * slots;
  const verdicts = [
    `All ${runs} Succeeded: ${v(ok.allSucceeded)} — phases in the API at the end: ${Object.entries(phases)
      .map(([p, n]) => `${p} ${n}`)
      .join(", ")}; attempts: ${Object.entries(attempts)
      .map(([at, n]) => `${at}: ${n}`)
      .join(", ")}`,
    `None lost: ${v(ok.noneLost)} — ${notInApi.length} created names missing from the API, ${lv.missing.length} missing from the ledger, ${createFailures} creates failed for good (${createRetries} create retries, ${alreadyExisted} found existing on a retry)`,
    `None doubled: ${v(ok.noneDoubled)} — ledger ${lv.lines} lines for ${runs} Runs; ${lv.doubled.length} lines written twice, ${lv.retried.length} names with several attempts, ${lv.unknown.length} unknown names`,
    `Terminal phases final: ${v(ok.terminalPhasesFinal)} — ${tally.flips.length} Runs the watch saw ended whose phase then changed${tally.flips.length > 0 ? ` (first: ${tally.flips.slice(0, 3).join("; ")})` : ""}; the controller's recovery took back ${[...recovery].map(([k, n]) => `${n} (${k})`).join(", ") || "none"}; runtimed's heartbeat renewals: ${[...renewals].map(([k, n]) => `${k} ${n}`).join(", ")}`,
    `Controller RSS ≤ 200 MiB: ${v(ok.rss)} — max ${mib(sum.controllerRssMax)} MiB (JS heap max ${mib(sum.controllerHeapMax)} MiB)`,
    `Scheduler decisions not the bottleneck: ${v(ok.schedulerDecisionsNotTheBottleneck)} — ${sc.cycles} cycles took ${sc.cycleSeconds.toFixed(3)} s in all (mean ${sc.meanCycleMicros.toFixed(0)} µs): busy ${pct(sc.busyShare)} of the wall time, at most ${pct(sc.maxIntervalBusyShare)} in one ${sampleMs / 1000} s interval; queued Runs that free capacity could take (\`kruntimes_scheduler_pending_fitting_runs\`) above 0 in ${pct(sc.pendingThatFitsNonZeroShare)} of the samples while Runs were Pending (max ${sc.pendingThatFitsMax}), with a bind slot free in ${pct(sc.fitsWhileBindSlotsFreeShare)}; all 32 bind slots in use in ${pct(sc.bindSlotsFullShare)} of them, mean bind (one status PATCH) ${sc.meanBindMs.toFixed(0)} ms`,
    `Throughput: ${sum.throughput.toFixed(1)} Runs/s overall (${runs} in ${sum.wallSeconds.toFixed(0)} s from the first create; all created after ${sum.createSeconds.toFixed(0)} s); ${sum.steadyThroughput.toFixed(1)} Runs/s at steady state (10 %→90 % Succeeded, t = ${sum.steadyWindow[0].toFixed(0)}–${sum.steadyWindow[1].toFixed(0)} s)`,
    `Slots: ${capacity} (${pods} pods × ${slots}); in the steady window the watch saw ${sum.meanInFlight.toFixed(0)} Runs Scheduled/Running on average (${pct(sum.meanInFlight / capacity)} of the slots) while the scheduler counted ${sum.meanHeld.toFixed(0)} slots held (its view: binds in flight and Runs whose end its watch has not shown yet) → a Run holds its slot ${sum.slotHoldSeconds.toFixed(2)} s as the watch sees it (Little's law: mean placed ÷ throughput); max Pending ${sum.maxPending}`,
    `Binds the controller's watch had not shown yet (assumed): ${sum.meanAssumed.toFixed(0)} on average in the steady window → a bind's response reached the controller's watch ${sum.confirmLagSeconds.toFixed(2)} s later (Little's law); runtimed learns of a bind by the same kind of watch`,
    `Create → ended as seen by a watch: p50 ${ms(0.5)} s, p90 ${ms(0.9)} s, p99 ${ms(0.99)} s, max ${ms(1)} s (a burst: mostly time queued)`,
    `CPU over the run (share of one core; the machine has ${cpus().length}, busy ${pct(sum.machineBusyShare)} of the time): ${sum.cpu
      .filter((c) => c.seconds >= 0.5)
      .map((c) => `${c.group} ${c.seconds.toFixed(0)} s (${pct(c.coreShare)})`)
      .join(", ")}`,
  ];

  const rows = compactRows(samples, tableSeconds);
  const groups = [
    "kube-apiserver",
    "etcd",
    "kruntimes controller",
    "runtimed",
    "Runtime Server",
    REAPED,
    NOT_OURS,
  ];
  const short: Record<string, string> = {
    "kube-apiserver": "apiserver",
    "kruntimes controller": "controller",
    "Runtime Server": "Runtime Server",
    [REAPED]: "Run processes",
    [NOT_OURS]: "not ours",
  };
  const report = [
    `# Scale: ${runs} Runs in one burst — ${new Date().toISOString().slice(0, 10)}`,
    "",
    `Machine: ${machine}; load average before ${loadBefore}, after ${loadAfter}.`,
    `Parameters${heartbeatFlowSchema ? " (experiment: runtimed's heartbeat Leases in APF priority level leader-election)" : ""}: ${runs} Runs (bash, \`echo "$KRUNTIME_RUN_NAME $KRUNTIME_ATTEMPT" >> ledger\`), created ${concurrency} at a time; Runtime \`bash\` of ${pods} pods × ${slots} slots on ${nodes} node agents (local cluster of its own); controller with its default flags (bind concurrency 32, waiting reason after 1 s, InsufficientCapacity after 10 s, scheduled-start timeout 30 s), real runtimed; sampled every ${sampleMs} ms.`,
    "",
    "Pods per node:",
    "",
    ...placementText.map((p) => `- ${p}`),
    "",
    "## Verdicts",
    "",
    ...verdicts.map((x) => `- ${x}`),
    "",
    "## Time series",
    "",
    `Every ${tableSeconds} s (the full series, one sample per ${sampleMs} ms, is in the .json beside this file). Pending / placed (Scheduled+Running) / Succeeded from the watch; ended/s over the interval; queue = scheduler's active/parked/backoff; fits = queued Runs that free capacity could take; binds = bind PATCHes in flight (of 32); held = slots the scheduler counts as held; sched busy = time in scheduling cycles ÷ wall; CPU as % of one core over the interval (Run processes = children the Runtime Servers reaped; not ours = everything else on the machine).`,
    "",
    `| t s | created | Pending | placed | Succeeded | Failed | ended/s | queue a/p/b | fits | binds | held | sched busy | ctl RSS MiB | ${groups.map((g) => `${short[g] ?? g} %`).join(" | ")} | machine % |`,
    `| --: | ------: | ------: | -----: | --------: | -----: | ------: | ----------- | ---: | ----: | ---: | ---------: | ----------: | ${groups.map(() => "--:").join(" | ")} | --: |`,
    ...rows.map(
      (r) =>
        `| ${r.t.toFixed(0)} | ${r.created} | ${r.pending} | ${r.running} | ${r.succeeded} | ${r.failed} | ${r.rate.toFixed(1)} | ${r.queue} | ${r.pendingThatFits} | ${r.bindsInFlight} | ${r.held} | ${(100 * r.schedBusy).toFixed(2)} % | ${r.controllerRssMiB.toFixed(0)} | ${groups.map((g) => (100 * (r.cpu[g] ?? 0)).toFixed(0)).join(" | ")} | ${(100 * r.machineBusy).toFixed(0)} |`,
    ),
    "",
    "## Apiserver requests in the window",
    "",
    `kube-apiserver's \`apiserver_request_duration_seconds\`, diffed around the burst (WATCH excluded). In the same window it closed ${apiStress.terminatedWatchers} watchers for falling behind (\`apiserver_terminated_watchers_total\`${
      Object.keys(terminatedByResource).length > 0
        ? `: ${Object.entries(terminatedByResource)
            .map(([r, n]) => `${r} ${n}`)
            .join(", ")}`
        : ""
    }) and API Priority and Fairness rejected ${apiStress.flowcontrolRejected} requests; the benchmark's own Run watch had to relist ${benchRelists} times (its resume point had left the watch cache).`,
    "",
    "| request | count | mean ms | total s |",
    "| ------- | ----: | ------: | ------: |",
    ...costs
      .slice(0, 12)
      .map((r) => `| ${r.key} | ${r.count} | ${r.meanMs.toFixed(1)} | ${r.seconds.toFixed(1)} |`),
    "",
    "## Heartbeats, recovery and API Priority and Fairness",
    "",
    `FlowSchema for runtimed's heartbeats: ${heartbeatFlowSchema ? "**applied** (runtimed's Lease requests in priority level `leader-election`)" : "none (the cluster's defaults: a service account's requests are in `workload-low`)"}. runtimed's heartbeat renewals: ${[...renewals].map(([k, n]) => `${k} ${n}`).join(", ")} (a renewal times out after 5 s; the controller takes a pod's Runs back after 15 s without one). Recovery (\`kruntimes_recovery_total\`): ${[...recovery].map(([k, n]) => `${k} ${n}`).join(", ") || "nothing"}. runtimed's status writes: ${[...statusWrites].map(([k, n]) => `${k} ${n}`).join(", ")}.`,
    "",
    "Time requests waited in API Priority and Fairness queues in the window (`apiserver_flowcontrol_request_wait_duration_seconds`, executed requests), by priority level:",
    "",
    "| priority level | requests | mean wait ms | waited > 1 s | waited > 5 s |",
    "| -------------- | -------: | -----------: | -----------: | -----------: |",
    ...apfRows.map((r) => `| ${r.level} | ${r.count} | ${r.meanMs.toFixed(1)} | ${r.over1s} | ${r.over5s} |`),
    "",
    `The controller logged ${
      ctlWarnings.size === 0
        ? "no warnings or errors"
        : `warnings/errors: ${[...ctlWarnings]
            .sort((x, y) => y[1] - x[1])
            .slice(0, 8)
            .map(([m, n]) => `"${m}" ×${n}`)
            .join(", ")}`
    } (log: \`${ctl.logFile}\`).`,
    "",
    ...(notSucceeded.length > 0
      ? ["Runs not Succeeded (first 20):", "", ...notSucceeded.slice(0, 20).map((x) => `- ${x}`), ""]
      : []),
    ...(lv.doubled.length + lv.retried.length > 0
      ? [
          "Ledger findings (first 20):",
          "",
          ...[...lv.doubled, ...lv.retried].slice(0, 20).map((x) => `- ${x}`),
          "",
        ]
      : []),
  ].join("\n");
  console.log(`\n${report}`);
  if (a.out) {
    writeFileSync(a.out, report);
    const json = a.out.replace(/\.md$/, "") + ".json";
    writeFileSync(
      json,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          machine,
          loadBefore,
          loadAfter,
          parameters: { runs, pods, slots, nodes, concurrency, sampleMs },
          placement,
          verdicts: ok,
          summary: sum,
          phases,
          attempts,
          ledger: { ...lv, missing: lv.missing.slice(0, 100) },
          latencySeconds: { p50: ms(0.5), p90: ms(0.9), p99: ms(0.99), max: ms(1) },
          apiserverRequests: costs,
          apiserverStress: apiStress,
          heartbeatFlowSchema,
          terminalFlips: tally.flips,
          recovery: Object.fromEntries(recovery),
          runtimedLeaseRenewals: Object.fromEntries(renewals),
          runtimedStatusWrites: Object.fromEntries(statusWrites),
          apf: apfRows,
          controllerWarnings: Object.fromEntries(ctlWarnings),
          samples,
        },
        null,
        1,
      )}\n`,
    );
    log(`wrote ${a.out} and ${json}`);
  }
} catch (e) {
  // After Ctrl-C the cluster goes down under whatever was in flight: that error is no news.
  if (!cleaning) {
    console.error(e);
    if (ctl) console.error(`controller log: ${ctl.logFile}`);
  }
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
