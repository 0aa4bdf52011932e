/** Renders a benchmark report as Markdown. */
import type { MemoryPoint, Params, Throughput } from "./scenarios.ts";

interface Report {
  date: string;
  machine: Record<string, string | number>;
  params: Params;
  results: { throughput: Throughput[]; memory: MemoryPoint[] };
}

export function renderMarkdown(r: Report): string {
  const lines = [
    `# Scheduler micro-benchmark, ${r.date.slice(0, 10)}`,
    "",
    "In-process (no apiserver): the production scheduler — cache, queue, plugins, bind tracker —",
    "with an in-memory binder that feeds every bind back as the informer event.",
    "Reproduce: `bun bench/scheduler/main.ts --out bench/results`.",
    "",
    `Machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    `Parameters: ${r.params.runs} Runs, ${r.params.pods} pods, median of ${r.params.repeat} repeats.`,
    "",
    "| scenario | decisions | decisions/s (median) | all repeats | binds | max pod use / capacity |",
    "|---|---|---|---|---|---|",
    ...r.results.throughput.map(
      (t) =>
        `| ${t.name}: ${t.description} | ${t.decisions} | ${t.decisionsPerSecond} | ${t.allDecisionsPerSecond.join(", ")} | ${t.binds} | ${t.maxPodUse} / ${t.capacity} |`,
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
