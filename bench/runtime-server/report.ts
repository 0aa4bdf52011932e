/** Markdown of one runtime-server benchmark run: machine, parameters, the table and ratios. */
import type { MachineInfo } from "../hotpath/machine.ts";
import type { Summary } from "../hotpath/stats.ts";

export interface VariantResult {
  name: string;
  language: string;
  pool: string;
  /** Call → TaskExited received, ms. */
  total: Summary;
  /** Call → TaskStarted received, ms. */
  toStarted: Summary;
  /** The server's own started → finished, ms. */
  inProcess: Summary;
  /** Share of Runs a warm interpreter took. */
  warmShare: number;
}

interface Report {
  date: string;
  machine: MachineInfo;
  params: { iterations: number; warmup: number; gapMs: number; warmPool: number; transport: string };
  results: VariantResult[];
  healthRoundTrip: Summary;
}

const ms = (x: number) => x.toFixed(2);

export function renderMarkdown(r: Report): string {
  const lines = [
    `# Runtime Server no-op Execute, warm vs cold, ${r.date.slice(0, 10)}`,
    "",
    "One no-op Run (`true` in bash, `pass` in python) per Execute, through the server's Unix socket",
    "with the Connect client runtimed uses; four servers (bash and python, warm pool and none) take",
    "the requests in rotation, one at a time. Reproduce: `bun bench/runtime-server/main.ts --out bench/results`.",
    "",
    `Machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    `Parameters: ${r.params.iterations} measured Runs per variant after ${r.params.warmup} warm-up, ${r.params.gapMs} ms between Runs, warm pool ${r.params.warmPool}; ${r.params.transport}.`,
    "",
    "| variant | total p50 ms | total p95 ms | total p99 ms | to TaskStarted p50 ms | process start→exit p50 ms | warm share |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const v of r.results) {
    lines.push(
      `| ${v.name} | ${ms(v.total.p50)} | ${ms(v.total.p95)} | ${ms(v.total.p99)} | ${ms(v.toStarted.p50)} | ${ms(v.inProcess.p50)} | ${Math.round(v.warmShare * 100)}% |`,
    );
  }
  const h = r.healthRoundTrip;
  lines.push(
    "",
    `Transport floor in the same run: a unary Health round trip p50 ${ms(h.p50)} ms, p95 ${ms(h.p95)} ms.`,
    "",
    "Cold ÷ warm (total latency):",
    "",
  );
  for (const language of ["bash", "python"]) {
    const warm = r.results.find((v) => v.language === language && v.name.endsWith("warm"));
    const cold = r.results.find((v) => v.language === language && v.name.endsWith("cold"));
    if (warm && cold) {
      lines.push(
        `- ${language}: p50 ${(cold.total.p50 / warm.total.p50).toFixed(2)}×, p95 ${(cold.total.p95 / warm.total.p95).toFixed(2)}×`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
