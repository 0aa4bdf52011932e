#!/usr/bin/env bun
import { readFileSync, writeFileSync } from "node:fs";
/**
 * Soak: task Runs at a steady rate for a long time (30 minutes unless told) on a local cluster of
 * its own, the controller (real runtimed, bash and python Runtimes) under it. Every sample: the
 * controller's and each runtimed's RSS (/proc) and JS heap (their /metrics), and how many Run
 * objects the apiserver holds. Verdicts: no growth trend in RSS or heap after warm-up (a
 * least-squares line over the window); the Run count stays bounded by TTL GC; and then a
 * controller with 10,000 Runs in its informer (the running leader, and a fresh one that lists
 * them at start) stays at or under 200 MiB RSS.
 *
 *   bun bench/soak/main.ts [--minutes 30] [--rate 4] [--sample-seconds 15] [--ttl-seconds 20]
 *                          [--informer-runs 10000] [--out bench/results/soak-<date>.md]
 */
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { Lease, Pod } from "../../controller/kube-types.ts";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import { eventually, testNamespace } from "../../test/support/cluster.ts";
import { OwnCluster } from "../../test/support/own-cluster.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { noGrowth, type Sample, trend } from "./trend.ts";

const { values: a } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    rate: { type: "string", default: "4" },
    "sample-seconds": { type: "string", default: "15" },
    "ttl-seconds": { type: "string", default: "20" },
    "warmup-fraction": { type: "string", default: "0.2" },
    "informer-runs": { type: "string", default: "10000" },
    out: { type: "string" },
  },
});
const minutes = Number(a.minutes);
const rate = Number(a.rate);
const sampleMs = Number(a["sample-seconds"]) * 1000;
const ttl = Number(a["ttl-seconds"]);
const informerRuns = Number(a["informer-runs"]);
const MiB = 1024 * 1024;
const RSS_LIMIT = 200 * MiB;

interface Proc {
  name: string;
  pid: () => number | undefined;
  metrics: () => Promise<string>;
}
interface Row {
  t: number;
  runsInApi: number;
  created: number;
  succeeded: number;
  failed: number;
  mem: Record<string, { rss: number; heap: number }>;
}

function rssOf(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return Number(m?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}
function heapOf(text: string): number {
  return Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1] ?? 0);
}
const mib = (b: number) => (b / MiB).toFixed(1);

const cluster = await OwnCluster.up({
  dir: process.env.KRT_SOAK_CLUSTER_DIR,
  podIpRange: process.env.KRT_SOAK_POD_IP_RANGE ?? "127.4.0.0/16",
  prefix: "krt-soak-",
});
const client: KubeClient = cluster.client;
const ctls: ControllerProcess[] = [];
let exitCode = 0;
try {
  await installCrds(client);
  const ns = (await testNamespace(client, "soak")).name;
  const startCtl = (id: string) => {
    const p = startController({
      namespace: ns,
      kubeconfig: cluster.kubeconfig,
      runtimed: "real",
      flags: [`--identity=${id}`, "--scheduled-start-timeout=30s"],
    });
    ctls.push(p);
    return p;
  };
  let ctl = startCtl("soak-a");
  await ctl.waitFor('"metricsPort"');
  await eventually(
    "soak-a leading",
    async () =>
      (await client.get<Lease>(path(R.leases, ns, "kruntimes-controller"))).spec?.holderIdentity === "soak-a",
    60_000,
  );
  await createRuntime(client, ns, imageRuntime("bash", "ghcr.io/kruntimes/bash", { replicas: 1, runs: 16 }));
  await createRuntime(
    client,
    ns,
    imageRuntime("python", "ghcr.io/kruntimes/python", { replicas: 1, runs: 16 }),
  );
  const pods: Record<string, Pod> = {};
  for (const rt of ["bash", "python"])
    pods[rt] = (await eventually(
      `${rt} ready`,
      async () => (await readyPods(client, ns, rt))[0],
      180_000,
    )) as Pod;
  const runtimedPid = (pod: Pod) =>
    cluster
      .containerProcesses()
      .find((x) => x.pod === `${ns}/${pod.metadata.name}` && x.container === "runtimed")?.pgid;
  const ctlPort = await ctl.metricsPort();
  const procs: Proc[] = [
    {
      name: "controller",
      pid: () => ctl.pid,
      metrics: async () => (await fetch(`http://127.0.0.1:${ctlPort}/metrics`)).text(),
    },
    ...Object.entries(pods).map(([rt, pod]) => ({
      name: `runtimed (${rt})`,
      pid: () => runtimedPid(pod),
      metrics: async () => (await fetch(`http://${pod.status?.podIP}:8081/metrics`)).text(),
    })),
  ];

  // The load: `rate` Runs a second, bash and python in turn, each deleted `ttl` s after it ends.
  let created = 0;
  let createErrors = 0;
  let stop = false;
  const loadLoop = (async () => {
    const t0 = Date.now();
    while (!stop) {
      const n = created++;
      const py = n % 2 === 1;
      void client
        .create<Run>(path(RunResource, ns), {
          apiVersion: "kruntimes.io/v1alpha1",
          kind: "Run",
          metadata: { name: `soak-${n}` },
          spec: {
            runtime: py ? "python" : "bash",
            mode: { task: {} },
            source: { inline: py ? `print("soak ${n}")` : `echo soak ${n}` },
            ttlSecondsAfterFinished: ttl,
          },
        })
        .catch(() => createErrors++);
      await Bun.sleep(Math.max(0, t0 + ((n + 1) * 1000) / rate - Date.now()));
    }
  })();

  // Terminal Runs seen while they still exist (counted once by name), from a list each sample.
  const ended = new Map<string, string>();
  const rows: Row[] = [];
  const started = Date.now();
  const end = started + minutes * 60_000;
  console.log(
    `soak: ${minutes} min, ${rate} Runs/s, TTL ${ttl} s, sample every ${sampleMs / 1000} s (namespace ${ns})`,
  );
  while (Date.now() < end) {
    await Bun.sleep(sampleMs);
    const list = await client.list<Run>(path(RunResource, ns)).catch(() => ({ items: [] as Run[] }));
    for (const r of list.items) {
      const p = r.status?.phase;
      if (p === "Succeeded" || p === "Failed" || p === "Timeout" || p === "Cancelled")
        ended.set(r.metadata.name as string, p);
    }
    const mem: Row["mem"] = {};
    for (const p of procs) {
      const text = await p.metrics().catch(() => "");
      mem[p.name] = { rss: rssOf(p.pid()), heap: heapOf(text) };
    }
    const values = [...ended.values()];
    const row: Row = {
      t: (Date.now() - started) / 1000,
      runsInApi: list.items.length,
      created,
      succeeded: values.filter((v) => v === "Succeeded").length,
      failed: values.filter((v) => v !== "Succeeded").length,
      mem,
    };
    rows.push(row);
    console.log(
      `t=${row.t.toFixed(0)}s runs in API ${row.runsInApi}, created ${created}, ended ok ${row.succeeded} / not ok ${row.failed}; ${Object.entries(
        mem,
      )
        .map(([k, m]) => `${k} rss ${mib(m.rss)} heap ${mib(m.heap)} MiB`)
        .join("; ")}`,
    );
  }
  stop = true;
  await loadLoop;

  // Verdicts over the window after warm-up.
  const warm = rows.filter((r) => r.t >= minutes * 60 * Number(a["warmup-fraction"]));
  const verdicts: string[] = [];
  const trendRows: string[] = [];
  for (const p of procs) {
    for (const kind of ["rss", "heap"] as const) {
      const s: Sample[] = warm.map((r) => ({ t: r.t, v: r.mem[p.name]?.[kind] ?? 0 }));
      const tr = trend(s);
      const ok = noGrowth(tr, 0.1, 8 * MiB);
      if (!ok) exitCode = 1;
      trendRows.push(
        `| ${p.name} | ${kind} | ${mib(tr.mean)} | ${mib(Math.min(...s.map((x) => x.v)))}–${mib(Math.max(...s.map((x) => x.v)))} | ${(tr.slopePerHour / MiB).toFixed(2)} | ${mib(tr.growthOverWindow)} | ${ok ? "no growth" : "GROWS"} |`,
      );
    }
  }
  const maxInApi = Math.max(...rows.map((r) => r.runsInApi));
  const bound = Math.ceil(rate * (ttl + 30));
  const boundOk = maxInApi <= bound;
  if (!boundOk) exitCode = 1;
  verdicts.push(
    `Run objects in the apiserver: max ${maxInApi} (bound ${bound} = rate × (TTL + 30 s)): ${boundOk ? "bounded" : "NOT BOUNDED"}`,
  );
  const last = rows.at(-1);
  verdicts.push(
    `Runs created ${created} (${createErrors} create errors); seen ending: ${last?.succeeded ?? 0} Succeeded, ${last?.failed ?? 0} not Succeeded`,
  );

  // 10,000 Runs in the informer: Runs for a Runtime that does not exist stay Pending and cached.
  let informer = "skipped (--informer-runs 0)";
  if (informerRuns > 0) {
    const t0 = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < informerRuns) {
          const i = next++;
          for (let k = 0; k < 5; k++) {
            try {
              await client.create(path(RunResource, ns), {
                apiVersion: "kruntimes.io/v1alpha1",
                kind: "Run",
                metadata: { name: `idle-${i}` },
                spec: { runtime: "absent", mode: { task: {} }, source: { inline: "true" } },
              });
              break;
            } catch {
              await Bun.sleep(200);
            }
          }
        }
      }),
    );
    const createdIn = (Date.now() - t0) / 1000;
    const parked = async (port: number) =>
      Number(
        /^kruntimes_scheduler_queue_depth\{queue="parked"\} (\S+)$/m.exec(
          await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
        )?.[1] ?? 0,
      );
    await eventually(
      "the leader holds every idle Run",
      async () => (await parked(ctlPort)) >= informerRuns,
      300_000,
    );
    await Bun.sleep(10_000);
    const leaderRss = rssOf(ctl.pid);
    // A fresh controller lists all of them at start: the peak of a restart.
    const fresh = startCtl("soak-b");
    await fresh.waitFor("caches synced", 300_000);
    ctl.kill("SIGTERM");
    await ctl.exited;
    await fresh.waitFor("scheduling and reconciling", 60_000);
    const freshPort = await fresh.metricsPort();
    await eventually(
      "the fresh leader holds every idle Run",
      async () => (await parked(freshPort)) >= informerRuns,
      300_000,
    );
    let freshPeak = 0;
    for (let i = 0; i < 20; i++) {
      freshPeak = Math.max(freshPeak, rssOf(fresh.pid));
      await Bun.sleep(500);
    }
    ctl = fresh;
    const ok = leaderRss <= RSS_LIMIT && freshPeak <= RSS_LIMIT;
    if (!ok) exitCode = 1;
    informer = `${informerRuns} Pending Runs created in ${createdIn.toFixed(0)} s; the soak's leader with them in its informer: RSS ${mib(leaderRss)} MiB; a fresh controller that listed them at start and leads: peak RSS ${mib(freshPeak)} MiB over 10 s (limit 200 MiB): ${ok ? "within" : "OVER"}`;
  }
  verdicts.push(informer);

  const report = [
    `# Soak — ${new Date().toISOString().slice(0, 10)}`,
    "",
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB; Bun ${Bun.version}; own local cluster.`,
    `Parameters: ${minutes} min, ${rate} Runs/s (bash and python in turn, \`echo\`/\`print\`), TTL ${ttl} s, sample every ${sampleMs / 1000} s, trend over the last ${(100 - Number(a["warmup-fraction"]) * 100).toFixed(0)} % (warm-up dropped), no-growth = fitted rise over the window ≤ max(8 MiB, 10 % of the mean).`,
    "",
    "| process | metric | mean MiB | range MiB | slope MiB/h | fitted rise over window MiB | verdict |",
    "| ------- | ------ | -------: | --------- | ----------: | --------------------------: | ------- |",
    ...trendRows,
    "",
    ...verdicts.map((v) => `- ${v}`),
    "",
    "Samples (every 4th):",
    "",
    "| t s | Runs in API | created | " + procs.map((p) => `${p.name} rss/heap MiB`).join(" | ") + " |",
    "| --: | ---------: | ------: | " + procs.map(() => "---").join(" | ") + " |",
    ...rows
      .filter((_, i) => i % 4 === 0 || i === rows.length - 1)
      .map(
        (r) =>
          `| ${r.t.toFixed(0)} | ${r.runsInApi} | ${r.created} | ${procs.map((p) => `${mib(r.mem[p.name]?.rss ?? 0)} / ${mib(r.mem[p.name]?.heap ?? 0)}`).join(" | ")} |`,
      ),
    "",
  ].join("\n");
  console.log(`\n${report}`);
  if (a.out) writeFileSync(a.out, report);
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  for (const p of ctls) p.kill("SIGKILL");
  await Promise.all(ctls.map((p) => p.exited));
  await cluster.down();
}
process.exit(exitCode);
