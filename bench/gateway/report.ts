/**
 * The cluster benchmark's markdown: per language, each concurrency's targets side by side (the
 * medians over rounds) with what the gateway adds over runtimed directly and its ratio to it.
 * The prose around it (readings, what stands in the way) is written by hand in bench/results.
 */
import type { MachineInfo } from "../hotpath/machine.ts";
import type { ClusterRow } from "./cluster.ts";

export interface ReportMeta {
  date: string;
  machine: MachineInfo;
  loadAverageBefore: number[];
  options: { durationMs: number; warmupMs: number; concurrency: number[]; rounds: number; workers: number };
  body: string;
}

const ms = (us: number) => (us / 1000).toFixed(3);

export function clusterTables(rows: ClusterRow[]): string {
  const out: string[] = [];
  const echo = rows.filter((r) => r.lang === "-");
  for (const lang of ["python", "bash"] as const) {
    const mine = rows.filter((r) => r.lang === lang);
    if (mine.length === 0) continue;
    out.push(`### ${lang}`, "");
    out.push(
      "| conc | target | p50 ms | p95 ms | p99 ms | req/s | errors | p50 − direct ms | p50 / direct | invoker own mean ms |",
      "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const c of [...new Set(mine.map((r) => r.concurrency))]) {
      const direct = mine.find((r) => r.concurrency === c && r.target.startsWith("floor: runtimed"));
      for (const r of [
        ...echo.filter((e) => e.concurrency === c),
        ...mine.filter((m) => m.concurrency === c),
      ]) {
        const vs =
          direct && r.target.startsWith("gateway")
            ? `${(r.p50 - direct.p50 >= 0 ? "+" : "") + ms(r.p50 - direct.p50)} | ${(r.p50 / direct.p50).toFixed(2)}×`
            : " | ";
        out.push(
          `| ${c} | ${r.target} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.p99)} | ${Math.round(r.rps)} | ${r.errors} | ${vs} | ${r.inGatewayMeanUs !== undefined ? ms(r.inGatewayMeanUs) : ""} |`,
        );
      }
    }
    out.push("");
  }
  return out.join("\n");
}

export function renderClusterReport(meta: ReportMeta, rows: ClusterRow[]): string {
  const m = meta.machine;
  return [
    `# Gateway benchmark on the local cluster (${meta.date.slice(0, 10)})`,
    "",
    `- machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Bun ${m.bun}; load average before ${meta.loadAverageBefore.join(" / ")}, after ${m.loadAverage.join(" / ")}`,
    `- per cell: ${meta.options.warmupMs} ms warm-up, ${meta.options.durationMs} ms measured, ${meta.options.rounds} rounds (rounds outermost, then concurrency, targets innermost); numbers are medians over rounds; body ${meta.body}; function Runs with concurrency ${meta.options.workers} (workers)`,
    "",
    clusterTables(rows),
  ].join("\n");
}
