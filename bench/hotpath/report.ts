/**
 * The benchmark's result for people: per scenario a stage × percentile table (ms), throughput,
 * concurrency and failures; then the baselines and the ratios against them. Markdown for
 * bench/results uses the same rows.
 */

import type { BenchResult } from "./bench.ts";
import { STAGES } from "./breakdown.ts";
import { floorRatio, type RunFloor } from "./run-floor.ts";
import type { ScenarioResult } from "./run-scenario.ts";
import { arrivalsText } from "./scenarios.ts";
import type { Summary } from "./stats.ts";

const ms = (v: number) =>
  Number.isNaN(v) ? "-" : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);

function stageRows(r: ScenarioResult): string[][] {
  return STAGES.map((k) => {
    const s: Summary = r.breakdown.stages[k];
    return [k, ms(s.p50), ms(s.p95), ms(s.p99), ms(s.max), ms(s.mean), String(s.n)];
  });
}

const HEADER = ["stage (ms)", "p50", "p95", "p99", "max", "mean", "n"];

export function scenarioTitle(r: ScenarioResult): string {
  const s = r.scenario;
  return `${s.name} — ${r.language}, ${s.runs} Runs, ${arrivalsText(s)}, ${s.pods} pods × ${s.slotsPerPod} slots, ${s.work}`;
}

function scenarioFacts(r: ScenarioResult): string {
  const b = r.breakdown;
  return `${b.succeeded} succeeded, ${b.failed} failed; ${b.throughput.toFixed(1)} Runs/s over ${b.wallSeconds.toFixed(2)} s; max ${b.maxConcurrent} executing at once, at most ${b.maxPending} waiting to be scheduled (at most ${b.pendingAtCapacity} while every slot was taken)`;
}

const label = (r: ScenarioResult) => `${r.scenario.name} (${r.language})`;

/** The lines comparing the measured numbers with the baselines (empty when none ran). */
export function comparisons(res: BenchResult): string[] {
  const out: string[] = [];
  const c = res.ceiling;
  if (c) {
    out.push(
      `apiserver write ceiling: ${c.writesPerSecond.toFixed(0)} writes/s (${c.objects} ConfigMap creates + patches, ${c.concurrency} in flight) → at most ${c.idealRunsPerSecond.toFixed(0)} Runs/s at 3 writes per Run`,
      `one write + one watch hop under that load (ConfigMap create sent → ADDED seen): p50 ${ms(c.watchHop.p50)} ms, p95 ${ms(c.watchHop.p95)} ms; the create alone p50 ${ms(c.createLatency.p50)} ms`,
    );
    for (const r of res.scenarios)
      if (r.scenario.work === "noop")
        out.push(
          `${label(r)}: ${r.breakdown.throughput.toFixed(1)} Runs/s = ${((100 * r.breakdown.throughput) / c.idealRunsPerSecond).toFixed(0)}% of that`,
        );
  }
  const rc = res.runCeiling;
  if (rc) {
    out.push(
      `Run write ceiling: ${rc.writesPerSecond.toFixed(0)} writes/s (${rc.objects} Runs × create + 2 status patches, ${rc.concurrency} in flight) → at most ${rc.idealRunsPerSecond.toFixed(0)} Runs/s`,
    );
    for (const r of res.scenarios)
      if (r.scenario.work === "noop")
        out.push(
          `${label(r)}: ${r.breakdown.throughput.toFixed(1)} Runs/s = ${((100 * r.breakdown.throughput) / rc.idealRunsPerSecond).toFixed(0)}% of the Run write ceiling ÷ 3`,
        );
  }
  for (const r of res.scenarios) {
    const ratio = floorRatio(r.breakdown.stages.complete, res.floors ?? [], r.scenario);
    if (ratio) {
      const at = ratio.floorOneAtATime ? "one at a time" : `at ${ratio.floorConcurrency} in flight`;
      out.push(
        `${label(r)}: complete p50 ${ratio.p50.toFixed(2)}×, p95 ${ratio.p95.toFixed(2)}× the Run-shaped floor ${at}`,
      );
    }
  }
  const j = res.jobs;
  if (j) {
    out.push(
      `one Job per task: create → Complete p50 ${ms(j.complete.p50)} ms, p95 ${ms(j.complete.p95)} ms (${j.complete.n} Jobs, ${j.failed} failed)`,
    );
    // Latency compares only where no Run queues for a slot (a Job gets its own pod).
    for (const r of res.scenarios) {
      const p50 = r.breakdown.stages.complete.p50;
      if (
        r.scenario.work === "noop" &&
        r.scenario.runs <= r.scenario.pods * r.scenario.slotsPerPod &&
        p50 > 0
      )
        out.push(
          `${label(r)}: a Job per task takes ${(j.complete.p50 / p50).toFixed(1)}× as long as a Run (complete p50)`,
        );
    }
  }
  return out;
}

const FLOOR_HEADER = ["floor (ms)", "in flight", "Runs", "p50", "p95", "p99", "max"];

/** The Run-shaped floor: per concurrency, each write's write + watch hop and the chain's complete. */
export function floorRows(floors: readonly RunFloor[]): string[][] {
  const rows: string[][] = [];
  for (const f of floors)
    for (const k of ["create", "bind", "finish", "complete"] as const) {
      const s = f[k];
      rows.push([
        k,
        f.oneAtATime ? "one at a time" : String(f.concurrency),
        String(f.runs),
        ms(s.p50),
        ms(s.p95),
        ms(s.p99),
        ms(s.max),
      ]);
    }
  return rows;
}

const FLOOR_TITLE =
  "Run-shaped floor — create, bind-shaped and finish-shaped status patch on Run objects, each sent when a separate watch saw the one before (write sent → seen; complete: create sent → finish seen)";

function align(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  "))
    .join("\n");
}

export function renderText(res: BenchResult): string {
  const m = res.machine;
  const out: string[] = [
    `client: ${m.cpus} CPUs, load average ${m.loadAverage.join(" / ")}; cluster ${res.cluster.version ?? "?"} at ${res.cluster.server}`,
    "",
  ];
  for (const r of res.scenarios) {
    out.push(scenarioTitle(r), align([HEADER, ...stageRows(r)]), scenarioFacts(r));
    for (const f of r.failures)
      out.push(`  not succeeded: ${f.name} ${f.phase ?? ""} ${f.reason ?? ""} ${f.message ?? ""}`.trimEnd());
    out.push("");
  }
  if (res.floors?.length) out.push(FLOOR_TITLE, align([FLOOR_HEADER, ...floorRows(res.floors)]), "");
  out.push(...comparisons(res));
  return out.join("\n").trimEnd();
}

export function renderMarkdown(res: BenchResult): string {
  const m = res.machine;
  const names = [...new Set(res.scenarios.map((r) => r.scenario.name))].join(",");
  const langs = [...new Set(res.scenarios.map((r) => r.language))].join(",");
  const out = [
    `# Hot path benchmark, ${res.startedAt.slice(0, 10)}`,
    "",
    `Measured by \`krt bench --scenario ${names} --runtime ${langs} --jobs ${res.options.jobs} --record bench/results\` (see docs/benchmarks.md); raw numbers in the .json beside this file.`,
    "",
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, bun ${m.bun}, load average ${m.loadAverage.join(" / ")} (1/5/15 min) at the end. Cluster: ${res.cluster.version ?? "unknown version"} at ${res.cluster.server}. Started ${res.startedAt}.`,
    "",
  ];
  for (const r of res.scenarios) {
    out.push(
      `### ${scenarioTitle(r)}`,
      "",
      `| ${HEADER.join(" | ")} |`,
      `|${HEADER.map(() => "---").join("|")}|`,
    );
    for (const row of stageRows(r)) out.push(`| ${row.join(" | ")} |`);
    out.push("", scenarioFacts(r), "");
  }
  if (res.floors?.length) {
    out.push(
      `### ${FLOOR_TITLE}`,
      "",
      `| ${FLOOR_HEADER.join(" | ")} |`,
      `|${FLOOR_HEADER.map(() => "---").join("|")}|`,
    );
    for (const row of floorRows(res.floors)) out.push(`| ${row.join(" | ")} |`);
    out.push("");
  }
  const cmp = comparisons(res);
  if (cmp.length) out.push("### Baselines", "", ...cmp.map((l) => `- ${l}`), "");
  return out.join("\n");
}
