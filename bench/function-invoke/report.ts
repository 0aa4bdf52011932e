/** The Markdown record of one run: per language, each concurrency's three targets side by side. */
import type { MachineInfo } from "../hotpath/machine.ts";
import type { LoadResult } from "./load.ts";

export interface Meta {
  date: string;
  machine: MachineInfo;
  durationMs: number;
  warmupMs: number;
  workers: number;
  body: string;
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : "–");

export function renderReport(
  meta: Meta,
  results: { lang: string; target: string; result: LoadResult }[],
): string {
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
    `- per cell: ${meta.warmupMs} ms warm-up, ${meta.durationMs} ms measured; request body ${meta.body}; each function Run has concurrency ${meta.workers} (workers), queue limit 64`,
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
    for (const c of [...new Set(rows.map((r) => r.result.concurrency))]) {
      const cell = rows.filter((r) => r.result.concurrency === c);
      const socket = cell.find((r) => r.target.startsWith("Runtime Server"))?.result.latency.p50;
      const echo = cell.find((r) => r.target.startsWith("Bun HTTP"))?.result.latency.p50;
      for (const r of cell) {
        const l = r.result.latency;
        const vs = (base: number | undefined) => (base ? `${(l.p50 / base).toFixed(2)}×` : "–");
        lines.push(
          `| ${c} | ${r.target} | ${ms(l.p50)} | ${ms(l.p95)} | ${ms(l.p99)} | ${Math.round(r.result.perSecond)} | ${r.result.failures}${r.result.firstFailure ? ` (${r.result.firstFailure.slice(0, 60)})` : ""} | ${vs(socket)} | ${vs(echo)} |`,
        );
      }
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
