/** The Markdown record of one run: per language, each concurrency's three targets side by side. */
import type { MachineInfo } from "../hotpath/machine.ts";
import type { LoadResult } from "./load.ts";

export interface Meta {
  date: string;
  machine: MachineInfo;
  durationMs: number;
  warmupMs: number;
  workers: number;
  rounds: number;
  body: string;
}

type Row = { round: number; lang: string; target: string; result: LoadResult };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] as number) : Number.NaN;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : "–");

export function renderReport(meta: Meta, results: Row[]): string {
  const m = meta.machine;
  const lines = [
    `# Function invocation: runtimed's dataplane port vs its floors (${meta.date.slice(0, 10)})`,
    "",
    "Produced by `bun bench/function-invoke/main.ts` (see its module comment). Local cluster: real",
    "controller, real runtimed and Runtime Server (pods are host processes, one loopback IP each).",
    "Closed-loop callers in one Bun process on the same machine; latency per call from",
    "`performance.now()`; targets interleaved per cell.",
    "",
    `- machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Bun ${m.bun}; load average when written ${m.loadAverage.join(" / ")}`,
    `- per cell: ${meta.warmupMs} ms warm-up, ${meta.durationMs} ms measured, ${meta.rounds} rounds (rounds outermost, the three targets of a cell back to back); every number below is the median over the rounds; request body ${meta.body}; each function Run has concurrency ${meta.workers} (workers), queue limit 64`,
    "- targets: **runtimed dataplane** = `FunctionDataplaneService.Invoke` on `$POD_IP:8444` (Connect binary, cached TokenReview, fence check, then the Runtime Server over its socket); **Runtime Server (socket)** = `FunctionService.Invoke` on the Unix socket directly (runtimed's own hop removed); **Bun HTTP echo** = a plain `Bun.serve` echo in its own process (the floor of any HTTP hop here)",
    "",
  ];
  for (const lang of [...new Set(results.map((r) => r.lang))]) {
    lines.push(
      `## ${lang}`,
      "",
      "| concurrency | target | p50 ms | p95 ms | p99 ms | invocations/s | failures | p50 vs socket | p50 vs echo |",
      "|---|---|---|---|---|---|---|---|---|",
    );
    const rows = results.filter((r) => r.lang === lang);
    const concurrencies = [...new Set(rows.map((r) => r.result.concurrency))];
    const targets = [...new Set(rows.map((r) => r.target))];
    for (const c of concurrencies) {
      const cell = targets.map((target) => {
        const runs = rows
          .filter((r) => r.result.concurrency === c && r.target === target)
          .map((r) => r.result);
        return {
          target,
          p50: median(runs.map((r) => r.latency.p50)),
          p95: median(runs.map((r) => r.latency.p95)),
          p99: median(runs.map((r) => r.latency.p99)),
          perSecond: median(runs.map((r) => r.perSecond)),
          failures: runs.reduce((n, r) => n + r.failures, 0),
          firstFailure: runs.find((r) => r.firstFailure)?.firstFailure,
        };
      });
      const socket = cell.find((r) => r.target.startsWith("Runtime Server"))?.p50;
      const echo = cell.find((r) => r.target.startsWith("Bun HTTP"))?.p50;
      for (const r of cell) {
        const vs = (base: number | undefined) => (base ? `${(r.p50 / base).toFixed(2)}×` : "–");
        lines.push(
          `| ${c} | ${r.target} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${Math.round(r.perSecond)} | ${r.failures}${r.firstFailure ? ` (${r.firstFailure.slice(0, 60)})` : ""} | ${vs(socket)} | ${vs(echo)} |`,
        );
      }
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
