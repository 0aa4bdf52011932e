/** Renders a benchmark report as Markdown. */
import type { MemoryPoint, Params, Throughput } from "./scenarios.ts";

interface Report {
  /** Base name of the result files. */
  name: string;
  date: string;
  machine: Record<string, string | number>;
  params: Params;
  results: { throughput: Throughput[]; memory: MemoryPoint[] };
}

export function renderMarkdown(r: Report): string {
  const lines = [
    `# Scheduler micro-benchmark${r.name === "scheduler" ? "" : ` (${r.name})`}, ${r.date.slice(0, 10)}`,
    "",
    "In-process (no apiserver): the production scheduler — cache, queue, plugins, bind tracker —",
    "with an in-memory binder that feeds every bind back as the informer event.",
    `Reproduce: \`bun bench/scheduler/main.ts --out bench/results${r.name === "scheduler" ? "" : ` --name ${r.name}`}\`.`,
    "The affinity scenarios give every Run terms: cohorts of 4 Runs with required runAffinity to",
    "their cohort label (the first seeds, the others follow it to its pod), 1 Run in 50 with",
    "required runAntiAffinity against the other db Runs (so its symmetry is checked for every",
    "Run), and preferred runAntiAffinity against all (spreading). Violations are counted among the",
    "Runs holding a pod after every round: a cohort on two pods, or two db Runs on one.",
    "",
    `Machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    `Parameters: ${r.params.runs} Runs, ${r.params.pods} pods, median of ${r.params.repeat} repeats.`,
    "",
    "| scenario | decisions | decisions/s (median) | all repeats | decisions per CPU-second (median) | binds | max pod use / capacity | affinity rules broken |",
    "|---|---|---|---|---|---|---|---|",
    ...r.results.throughput.map(
      (t) =>
        `| ${t.name}: ${t.description} | ${t.decisions} | ${t.decisionsPerSecond} | ${t.allDecisionsPerSecond.join(", ")} | ${t.decisionsPerCpuSecond} | ${t.binds} | ${t.maxPodUse} / ${t.capacity} | ${t.violations ?? "—"} |`,
    ),
    "",
    "Memory held by the scheduler's state (Run objects as the informer holds them, pods, queue,",
    "accounting), measured as heap growth after a full GC:",
    "",
    "| Runs | pods | heap MiB | bytes per Run |",
    "|---|---|---|---|",
    ...r.results.memory.map((m) => `| ${m.runs} | ${m.pods} | ${m.heapMiB} | ${m.bytesPerRun} |`),
    "",
  ];
  return lines.join("\n");
}
