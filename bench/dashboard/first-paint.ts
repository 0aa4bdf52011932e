#!/usr/bin/env bun
/**
 * First paint of the dashboard's Runs view with 2,000 Runs: the dashboard in local mode (the
 * kubeconfig's credentials) on 127.0.0.1, a fresh namespace with N Runs in a mix of phases (the
 * status written through the status subresource, as the controller and runtimed would), and
 * headless Chromium loading /ns/<ns>/runs in a fresh browser context each round (no cache).
 *
 * Measured per round, from the navigation's start (performance.timeOrigin):
 *   - fcp: first-contentful-paint (the page shell)
 *   - first rows: the first Run rows are in the DOM and two animation frames have passed (they are
 *     painted) — "first paint of the Runs view"; the list streams its first page of 500 at once
 *   - all rows: the count says "N of N" (every page arrived), painted
 *   - snapshot bytes: size of the list stream's first message
 *
 *   KUBECONFIG=… bun bench/dashboard/first-paint.ts [--runs 2000] [--rounds 7] [--out FILE.md]
 *   bun bench/dashboard/first-paint.ts --apiserver standin     # the same Runs from an in-process stand-in
 */
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { RunResource } from "@kruntimes/api";
import { type ClusterConnection, KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { startDashboard } from "../../dashboard/server/dashboard.ts";
import { dashboardLogger } from "../../dashboard/server/log.ts";
import { launchChromium } from "../../test/e2e/docs-site-support.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "2000" },
    rounds: { type: "string", default: "7" },
    out: { type: "string" },
    // cluster: Runs created on the cluster of $KUBECONFIG; standin: a stand-in apiserver in this
    // process serving the same Runs from memory (the dashboard's and the browser's share alone).
    apiserver: { type: "string", default: "cluster" },
  },
});
const STANDIN = values.apiserver === "standin";
const N = Number(values.runs);
const ROUNDS = Number(values.rounds);
const kubeconfig = process.env.KUBECONFIG;
if (!kubeconfig && !STANDIN) throw new Error("set KUBECONFIG (e.g. the local cluster's admin.kubeconfig)");

const PHASES = ["Succeeded", "Succeeded", "Succeeded", "Failed", "Running", "Pending", "Ready", "Cancelled"];

/** Run i: spec, and the status the controller and runtimed would have written. */
function runObject(ns: string, i: number, base: number) {
  const phase = PHASES[i % PHASES.length] as string;
  const created = base + i * 1000;
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: {
      name: `r-${String(i).padStart(5, "0")}`,
      namespace: ns,
      uid: `uid-${i}`,
      resourceVersion: "1",
      creationTimestamp: new Date(created / 1000).toISOString().replace(/\.\d+Z$/, "Z"),
      labels: { team: i % 2 ? "a" : "b" },
    },
    spec: { runtime: i % 3 ? "bash" : "python", mode: { task: {} }, source: { inline: `echo ${i}` } },
    status: {
      phase,
      attempt: 1,
      ...(phase === "Failed" ? { reason: "NonZeroExit", exitCode: 1 } : {}),
      ...(phase === "Succeeded" ? { reason: "Completed", exitCode: 0 } : {}),
      timing: {
        createdMicros: created,
        scheduledMicros: created + 2000,
        startedMicros: created + 3000,
        ...(phase === "Succeeded" || phase === "Failed"
          ? { finishedMicros: created + 50_000, reportedMicros: created + 52_000 }
          : {}),
      },
    },
  };
}

/** An apiserver stand-in: the Runs list (pages, continue), a watch that stays open, a self-review. */
function standinApiserver(ns: string) {
  const base = Date.now() * 1000;
  const runs = Array.from({ length: N }, (_, i) => runObject(ns, i, base));
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch(req) {
      const u = new URL(req.url);
      if (u.pathname.endsWith("selfsubjectreviews"))
        return Response.json({ status: { userInfo: { username: "bench" } } });
      if (u.searchParams.get("watch")) return new Response(new ReadableStream({ start() {} }));
      const from = Number(u.searchParams.get("continue") ?? "0");
      const limit = Number(u.searchParams.get("limit") ?? N);
      const to = Math.min(N, from + limit);
      return Response.json({
        metadata: { resourceVersion: "1", ...(to < N ? { continue: String(to) } : {}) },
        items: runs.slice(from, to),
      });
    },
  });
}

async function createRuns(client: KubeClient, ns: string): Promise<number> {
  const t0 = performance.now();
  const base = Date.now() * 1000;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) {
      const { status, metadata, ...obj } = runObject(ns, i, base);
      const run = await client.create<{ metadata: { name: string } }>(path(RunResource, ns), {
        ...obj,
        metadata: { name: metadata.name, labels: metadata.labels },
      });
      await client.patch(path(RunResource, ns, run.metadata.name, "status"), { status });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return performance.now() - t0;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

const standin = STANDIN ? standinApiserver("bench") : undefined;
const conn: ClusterConnection = standin
  ? { server: `http://127.0.0.1:${standin.port}`, namespace: "bench" }
  : loadKubeconfigFile(kubeconfig as string);
const client = new KubeClient(conn);
if (!standin) {
  // A fresh cluster has no kruntimes CRDs yet (the chart or the controller's tests install them).
  await installCrds(client);
  for (let i = 0; ; i++) {
    const ok = await client.list(path(RunResource)).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (i === 100) throw new Error("the Run API did not start serving within 10 s");
    await Bun.sleep(100);
  }
}
const ns = standin
  ? "bench"
  : (
      await client.create<{ metadata: { name: string } }>(path(R.namespaces), {
        metadata: { generateName: "dash-bench-" },
      })
    ).metadata.name;
const dashboard = await startDashboard(
  {
    host: "127.0.0.1",
    port: 0,
    auth: "kubeconfig",
    caFile: "",
    gatewayNamespace: "kruntimes",
    logLevel: "warn",
  },
  conn,
  dashboardLogger("warn", 2),
);
const browser = await launchChromium();
try {
  let createMs = 0;
  if (!standin) {
    process.stderr.write(`creating ${N} Runs in ${ns}…\n`);
    createMs = await createRuns(client, ns);
    process.stderr.write(`created in ${(createMs / 1000).toFixed(1)} s\n`);
  }
  const url = `${dashboard.url}ns/${ns}/runs`;
  // Server side alone: the list stream's snapshot (apiserver list + summaries), from a plain fetch.
  const server: number[] = [];
  const serverAll: number[] = [];
  let snapshotBytes = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    const res = await fetch(`${dashboard.url}api/namespaces/${ns}/watch/runs`);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    let first = 0;
    while (!/"complete":true/.test(text)) {
      text += new TextDecoder().decode((await reader.read()).value);
      if (!first && /event: snapshot\ndata: .*\n\n/.test(text)) first = performance.now() - t;
    }
    server.push(first);
    serverAll.push(performance.now() - t);
    snapshotBytes = text.length;
    await reader.cancel();
  }
  const fcp: number[] = [];
  const firstRows: number[] = [];
  const rows: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "commit" });
    const m = await page.evaluate<{ fcp: number; first: number; rows: number }>(
      `new Promise((resolve) => {
        const n = ${N};
        let first = 0;
        const done = () => {
          const count = document.querySelector('[data-testid="run-count"]');
          if (!document.querySelector("[data-run]") || !count) return false;
          if (!first) first = -1, requestAnimationFrame(() => requestAnimationFrame(() => { first = performance.now(); }));
          if (count.textContent !== n + " of " + n) return false;
          requestAnimationFrame(() => requestAnimationFrame(() => {
            const fcp = performance.getEntriesByName("first-contentful-paint")[0];
            const all = performance.now();
            const wait = () => first > 0 ? resolve({ fcp: fcp ? fcp.startTime : -1, first, rows: all }) : setTimeout(wait, 5);
            wait();
          }));
          return true;
        };
        if (done()) return;
        const mo = new MutationObserver(() => { if (done()) mo.disconnect(); });
        mo.observe(document, { subtree: true, childList: true, characterData: true });
      })`,
    );
    firstRows.push(m.first);
    fcp.push(m.fcp);
    rows.push(m.rows);
    const domRows = await page.locator("[data-run]").count();
    if (i === 0) process.stderr.write(`rows in the DOM (virtualised): ${domRows} of ${N}\n`);
    await context.close();
  }
  const fmt = (xs: number[]) => `${pct(xs, 50).toFixed(0)} ms p50, ${Math.max(...xs).toFixed(0)} ms max`;
  const cpu = cpus()[0]?.model ?? "unknown";
  const report = `# Dashboard: first paint of the Runs view with ${N} Runs (${new Date().toISOString().slice(0, 10)})

Machine: ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Bun ${Bun.version}, Chromium (Debian) headless
(--headless --no-sandbox --disable-gpu --disable-background-networking), viewport 1280×900.
${standin ? "Apiserver: a stand-in in the bench process serving the Runs from memory (`--apiserver standin`): the dashboard's and the browser's share alone." : "Cluster: the cluster KUBECONFIG names (on the local cluster: a real kube-apiserver + etcd on this machine)."}
Parameters: ${N} Runs in one namespace (phases ${[...new Set(PHASES)].join(", ")}; ${standin ? "statuses as the controller and runtimed write them" : "status written through the status subresource"}), ${ROUNDS} rounds, a fresh browser context per round (no cache), the dashboard in
local mode on 127.0.0.1 (\`bun bench/dashboard/first-paint.ts --runs ${N} --rounds ${ROUNDS} --apiserver ${values.apiserver}\`).

| measure | result | target |
| --- | --- | --- |
| first paint of the Runs view (navigation start → first rows painted) | **${fmt(firstRows)}** | ≤ 1000 ms |
| all ${N} Runs in the view (navigation start → "${N} of ${N}" painted) | ${fmt(rows)} | |
| first-contentful-paint (page shell) | ${fmt(fcp)} | |
| list stream alone, first page of 500 (apiserver list page + summaries, from fetch) | ${fmt(server)} | |
| list stream alone, all ${N} | ${fmt(serverAll)} | |
| stream size for ${N} Runs | ${(snapshotBytes / 1024).toFixed(0)} KiB (${Math.round(snapshotBytes / N)} bytes per Run) | |

Raw (ms): first rows ${firstRows.map((x) => x.toFixed(0)).join(", ")}; all rows ${rows.map((x) => x.toFixed(0)).join(", ")}; fcp ${fcp.map((x) => x.toFixed(0)).join(", ")}; stream first page ${server.map((x) => x.toFixed(0)).join(", ")}; stream all ${serverAll.map((x) => x.toFixed(0)).join(", ")}.
Load average at the end: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(", ")}.
${standin ? "" : `Creating the ${N} Runs (create + status patch, 32 at a time) took ${(createMs / 1000).toFixed(1)} s.`}
`;
  process.stdout.write(report);
  if (values.out) await Bun.write(values.out, report);
} finally {
  await browser.close();
  await dashboard.stop();
  if (standin) standin.stop(true);
  else await client.delete(path(R.namespaces, undefined, ns)).catch(() => {});
}
