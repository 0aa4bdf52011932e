/** Markdown of one function-invoke benchmark run: machine, parameters, the table and the ratios. */
import type { MachineInfo } from "../hotpath/machine.ts";
import type { Summary } from "../hotpath/stats.ts";

export interface InvokeVariantResult {
  name: string;
  kind: "floor" | "function";
  /** Calls in flight from the client. */
  concurrency: number;
  /** Per-call latency, ms. */
  latency: Summary;
  /** Calls per second over the measured rounds. */
  perSecond: number;
}

interface Report {
  date: string;
  machine: MachineInfo;
  params: { requests: number; rounds: number; bodyBytes: number; levels: number[]; transport: string };
  results: InvokeVariantResult[];
}

const ms = (x: number) => x.toFixed(3);

export function renderInvokeMarkdown(r: Report): string {
  const lines = [
    `# Function invoke on the Runtime Server's socket, ${r.date.slice(0, 10)}`,
    "",
    "An echo handler (python: `return request.body`; bash: builtins only, `read` the body and",
    "`printf` it, so the fork of the warm shell is the whole cost) invoked directly on the Runtime",
    "Server's Unix socket, beside two floors measured in the same run: a plain `Bun.serve` HTTP echo on",
    "a Unix socket in its own process, and a Connect unary Health call on the same server. Variants",
    "take turns in rounds. One registration per language and level, with concurrency = the level.",
    '"python invoke" uses the generated Connect client (connect-web, binary); "raw binary POST" sends',
    "the encoded InvokeRequest with plain `fetch`, as runtimed's dataplane fast path forwards it.",
    "Reproduce: `bun bench/runtime-server/function-invoke.ts --out bench/results`.",
    "",
    `Machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    `Parameters: ${r.params.requests} measured calls per variant and level in ${r.params.rounds} rounds, ${r.params.bodyBytes}-byte bodies; ${r.params.transport}.`,
    "",
    "| variant | concurrency | p50 ms | p95 ms | p99 ms | calls/s |",
    "|---|---|---|---|---|---|",
  ];
  for (const v of r.results) {
    lines.push(
      `| ${v.name} | ${v.concurrency} | ${ms(v.latency.p50)} | ${ms(v.latency.p95)} | ${ms(v.latency.p99)} | ${Math.round(v.perSecond)} |`,
    );
  }
  lines.push("", "Ratios to the Bun.serve echo floor at the same concurrency (p50 latency; throughput):", "");
  for (const level of r.params.levels) {
    const floor = r.results.find((v) => v.concurrency === level && v.name.startsWith("Bun.serve"));
    if (floor === undefined) continue;
    for (const v of r.results.filter((x) => x.concurrency === level && x !== floor)) {
      lines.push(
        `- c=${level} ${v.name}: p50 ${(v.latency.p50 / floor.latency.p50).toFixed(2)}×, throughput ${(v.perSecond / floor.perSecond).toFixed(2)}× of the floor`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
