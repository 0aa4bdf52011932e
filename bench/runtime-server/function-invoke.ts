/**
 * Function invoke latency and throughput directly on the Runtime Server's Unix socket, python and
 * bash, at client concurrency 1, 8 and 64, side by side in one run with two floors: a plain
 * Bun.serve HTTP echo on a Unix socket (the transport's floor) and a Connect unary Health call on
 * the same server (the RPC layer's floor). Variants take turns in short rounds so machine noise
 * lands on all of them alike. The client is connect-web on Bun fetch with binary protobuf, as
 * runtimed's generated client calls the server, and (python) a raw POST of the encoded request,
 * as runtimed's dataplane fast path forwards it.
 *
 * bun bench/runtime-server/function-invoke.ts [--requests 3000] [--rounds 6] [--body-bytes 64] [--out bench/results]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceTarget } from "../../runtimes/conformance/conformance.ts";
import { ServerProcess } from "../../runtimes/conformance/server-process.ts";
import { rawInvoke } from "../../runtimes/testing/raw-invoke.ts";
import { machineInfo } from "../hotpath/machine.ts";
import { summarize } from "../hotpath/stats.ts";
import { type InvokeVariantResult, renderInvokeMarkdown } from "./function-invoke-report.ts";

interface Params {
  requests: number;
  rounds: number;
  bodyBytes: number;
  levels: number[];
  out: string | undefined;
}

function parseArgs(argv: string[]): Params {
  const params: Params = { requests: 3000, rounds: 6, bodyBytes: 64, levels: [1, 8, 64], out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--out") params.out = value;
    else if (flag === "--requests") params.requests = Number(value);
    else if (flag === "--rounds") params.rounds = Number(value);
    else if (flag === "--body-bytes") params.bodyBytes = Number(value);
    else if (flag === "--levels") params.levels = value.split(",").map(Number);
    else throw new Error(`unknown flag ${flag}; flags: --requests --rounds --body-bytes --levels --out`);
  }
  return params;
}

const PYTHON_SOURCE = "def handle(request):\n    return request.body\n";
/** Builtins only: the fork of the warm shell is the whole cost. */
const BASH_SOURCE = "handle() { local body; IFS= read -r -d '' body; printf '%s' \"$body\"; }\n";

type Call = () => Promise<void>;

interface Variant {
  name: string;
  kind: "floor" | "function";
  /** One call at this concurrency level. */
  call(level: number): Call;
  latencies: Map<number, number[]>;
  /** Wall time of the rounds per level, ms, and the calls made in them. */
  wallMs: Map<number, number>;
}

/** `count` calls with `level` loops in flight; pushes each call's latency. */
async function drive(call: Call, level: number, count: number, out: number[]): Promise<number> {
  let left = count;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: level }, async () => {
      while (left > 0) {
        left--;
        const start = performance.now();
        await call();
        out.push(performance.now() - start);
      }
    }),
  );
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const params = parseArgs(process.argv.slice(2));
  const entry = fileURLToPath(new URL("../../runtimes/server/main.ts", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "krt-bench-fn-"));
  const echoSocket = join(dir, "echo.sock");
  const echo = Bun.spawn({
    cmd: [process.execPath, fileURLToPath(new URL("./echo-server.ts", import.meta.url)), echoSocket],
    stdout: "pipe",
    stderr: "inherit",
  });
  await echo.stdout.getReader().read();
  const python = await ServerProcess.start(sourceTarget("python", entry), { warmPool: 0 });
  const bash = await ServerProcess.start(sourceTarget("bash", entry), { warmPool: 0 });
  const body = new Uint8Array(params.bodyBytes).fill(0x61);
  let seq = 0;
  try {
    // One registration per language and level: concurrency = the level (one worker per caller).
    for (const [server, source] of [
      [python, PYTHON_SOURCE],
      [bash, BASH_SOURCE],
    ] as const) {
      for (const level of params.levels) {
        const res = await server.binaryClients.functions.register({
          runUid: `bench-${level}`,
          runName: "bench",
          attempt: 1,
          source,
          handler: "handle",
          concurrency: level,
          queueLimit: 1024,
        });
        if (res.registration?.state !== 2) throw new Error(`register failed: ${res.registration?.error}`);
      }
    }
    const invoker = (server: ServerProcess) => (level: number) => async () => {
      const res = await server.binaryClients.functions.invoke({
        runUid: `bench-${level}`,
        attempt: 1,
        invocationId: `i${++seq}`,
        body,
        contentType: "application/octet-stream",
      });
      if (res.handlerError !== undefined || res.body.length !== body.length)
        throw new Error("bad invoke answer");
    };
    // What runtimed's fast path does: the Connect binary request POSTed as bytes, no RPC client.
    const rawInvoker = (server: ServerProcess) => (level: number) => async () => {
      const { status, response } = await rawInvoke(server.settings.socket, {
        runUid: `bench-${level}`,
        attempt: 1,
        invocationId: `i${++seq}`,
        body,
        contentType: "application/octet-stream",
      });
      if (status !== 200 || response?.body.length !== body.length) throw new Error("bad raw invoke answer");
    };
    const variants: Variant[] = [
      {
        name: "Bun.serve echo (floor)",
        kind: "floor",
        call: () => async () => {
          const res = await fetch("http://echo/", { method: "POST", body, unix: echoSocket } as RequestInit);
          await res.arrayBuffer();
        },
        latencies: new Map(),
        wallMs: new Map(),
      },
      {
        name: "Connect Health (RPC floor)",
        kind: "floor",
        call: () => async () => {
          await python.binaryClients.runtime.health({});
        },
        latencies: new Map(),
        wallMs: new Map(),
      },
      {
        name: "python invoke",
        kind: "function",
        call: invoker(python),
        latencies: new Map(),
        wallMs: new Map(),
      },
      {
        name: "python invoke, raw binary POST",
        kind: "function",
        call: rawInvoker(python),
        latencies: new Map(),
        wallMs: new Map(),
      },
      { name: "bash invoke", kind: "function", call: invoker(bash), latencies: new Map(), wallMs: new Map() },
      {
        name: "bash invoke, raw binary POST",
        kind: "function",
        call: rawInvoker(bash),
        latencies: new Map(),
        wallMs: new Map(),
      },
    ];
    // Warm-up: every path once per level, a few hundred calls.
    for (const v of variants) for (const level of params.levels) await drive(v.call(level), level, 200, []);
    const perRound = Math.ceil(params.requests / params.rounds);
    for (let round = 0; round < params.rounds; round++) {
      for (const level of params.levels) {
        for (let k = 0; k < variants.length; k++) {
          const v = variants[(round + k) % variants.length]!;
          const out = v.latencies.get(level) ?? [];
          v.latencies.set(level, out);
          const wall = await drive(v.call(level), level, perRound, out);
          v.wallMs.set(level, (v.wallMs.get(level) ?? 0) + wall);
        }
      }
    }
    const results: InvokeVariantResult[] = [];
    for (const v of variants) {
      for (const level of params.levels) {
        const lat = v.latencies.get(level) ?? [];
        results.push({
          name: v.name,
          kind: v.kind,
          concurrency: level,
          latency: summarize(lat),
          perSecond: lat.length / ((v.wallMs.get(level) ?? 1) / 1000),
        });
      }
    }
    const report = {
      benchmark: "runtime-server function invoke",
      date: new Date().toISOString(),
      machine: machineInfo(),
      params: {
        requests: params.requests,
        rounds: params.rounds,
        bodyBytes: params.bodyBytes,
        levels: params.levels,
        transport:
          "Connect binary over HTTP/1.1 on a Unix socket (connect-web on Bun fetch), as runtimed calls it",
        python: PYTHON_SOURCE,
        bash: BASH_SOURCE,
      },
      results,
    };
    const markdown = renderInvokeMarkdown(report);
    process.stdout.write(`${markdown}\n`);
    if (params.out !== undefined) {
      mkdirSync(params.out, { recursive: true });
      const stem = join(params.out, `function-invoke-server-${report.date.slice(0, 10)}`);
      writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(`${stem}.md`, markdown);
      process.stderr.write(`wrote ${stem}.md and ${stem}.json\n`);
    }
  } finally {
    await python.stop();
    await bash.stop();
    echo.kill("SIGTERM");
    await echo.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
