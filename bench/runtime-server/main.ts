/**
 * No-op Execute latency through the Runtime Server's Unix socket, warm interpreters vs cold
 * starts, bash and python, side by side in one run: four real servers (bash/python × pool 2/0)
 * take the same no-op in rotation, so machine noise lands on every variant alike.
 *
 * bun bench/runtime-server/main.ts [--iterations 300] [--warmup 30] [--gap-ms 2] [--out bench/results]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceTarget } from "../../runtimes/conformance/conformance.ts";
import { EventLog } from "../../runtimes/conformance/event-log.ts";
import { ServerProcess } from "../../runtimes/conformance/server-process.ts";
import { machineInfo } from "../hotpath/machine.ts";
import { summarize } from "../hotpath/stats.ts";
import { renderMarkdown, type VariantResult } from "./report.ts";

interface Params {
  iterations: number;
  warmup: number;
  gapMs: number;
  warmPool: number;
  out: string | undefined;
}

function parseArgs(argv: string[]): Params {
  const params: Params = { iterations: 300, warmup: 30, gapMs: 2, warmPool: 2, out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--out") params.out = value;
    else if (flag === "--iterations") params.iterations = Number(value);
    else if (flag === "--warmup") params.warmup = Number(value);
    else if (flag === "--gap-ms") params.gapMs = Number(value);
    else if (flag === "--warm-pool") params.warmPool = Number(value);
    else throw new Error(`unknown flag ${flag}; flags: --iterations --warmup --gap-ms --warm-pool --out`);
  }
  return params;
}

interface Variant {
  name: string;
  language: "bash" | "python";
  warm: boolean;
  noop: string;
  server?: ServerProcess;
  total: number[];
  toStarted: number[];
  inProcess: number[];
  warmHits: number;
}

async function once(v: Variant, uid: string, record: boolean): Promise<void> {
  const t0 = performance.now();
  let started = 0;
  const log = new EventLog(
    v.server!.clients.task.execute({ runUid: uid, attempt: 1, program: { case: "inline", value: v.noop } }),
  );
  await log.until((l) => {
    if (started === 0 && l.started !== undefined) started = performance.now();
    return l.exited !== undefined;
  }, 30_000);
  const total = performance.now() - t0;
  const exited = log.exited!;
  if (exited.exitCode !== 0) throw new Error(`${v.name}: no-op failed: ${JSON.stringify(exited.message)}`);
  if (!record) return;
  v.total.push(total);
  v.toStarted.push((started || performance.now()) - t0);
  v.inProcess.push(Number(exited.finishedAtMicros - exited.startedAtMicros) / 1000);
  if (log.started?.warm) v.warmHits++;
}

async function main(): Promise<void> {
  const params = parseArgs(process.argv.slice(2));
  const entry = fileURLToPath(new URL("../../runtimes/server/main.ts", import.meta.url));
  const variants: Variant[] = [];
  for (const language of ["bash", "python"] as const) {
    for (const warm of [true, false]) {
      variants.push({
        name: `${language} ${warm ? "warm" : "cold"}`,
        language,
        warm,
        noop: language === "bash" ? "true\n" : "pass\n",
        total: [],
        toStarted: [],
        inProcess: [],
        warmHits: 0,
      });
    }
  }
  for (const v of variants) {
    v.server = await ServerProcess.start(sourceTarget(v.language, entry), {
      warmPool: v.warm ? params.warmPool : 0,
    });
  }
  const health: number[] = [];
  try {
    let n = 0;
    for (let i = 0; i < params.warmup + params.iterations; i++) {
      // Rotate the order so no variant always follows the same neighbour.
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(i + k) % variants.length]!;
        await once(v, `bench-${++n}`, i >= params.warmup);
        if (params.gapMs > 0) await Bun.sleep(params.gapMs);
      }
      // The transport's floor in the same conditions: one unary Health round trip.
      const t0 = performance.now();
      await variants[0]!.server!.clients.runtime.health({});
      if (i >= params.warmup) health.push(performance.now() - t0);
    }
  } finally {
    for (const v of variants) await v.server?.stop();
  }
  const results: VariantResult[] = variants.map((v) => ({
    name: v.name,
    language: v.language,
    pool: v.warm ? `warm (pool ${params.warmPool})` : "cold (pool 0)",
    total: summarize(v.total),
    toStarted: summarize(v.toStarted),
    inProcess: summarize(v.inProcess),
    warmShare: v.warmHits / v.total.length,
  }));
  const report = {
    benchmark: "runtime-server no-op Execute, warm vs cold",
    date: new Date().toISOString(),
    machine: machineInfo(),
    params: {
      ...params,
      out: undefined,
      transport: "Connect over HTTP/1.1 on a Unix socket (connect-web on Bun fetch)",
    },
    results,
    healthRoundTrip: summarize(health),
    raw: Object.fromEntries(variants.map((v) => [v.name, { totalMs: v.total, toStartedMs: v.toStarted }])),
  };
  const markdown = renderMarkdown(report);
  process.stdout.write(`${markdown}\n`);
  if (params.out !== undefined) {
    mkdirSync(params.out, { recursive: true });
    const stem = join(params.out, `runtime-server-${report.date.slice(0, 10)}`);
    writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(`${stem}.md`, markdown);
    process.stderr.write(`wrote ${stem}.md and ${stem}.json\n`);
  }
}

await main();
