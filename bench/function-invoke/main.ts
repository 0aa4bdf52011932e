#!/usr/bin/env bun
/**
 * Function invocation latency and throughput on runtimed's dataplane port, side by side in one
 * run with its floors: the Runtime Server called directly over its Unix socket (what runtimed
 * adds is the difference), and a plain Bun.serve HTTP echo (what any HTTP hop costs here). bash
 * and python function Runs, closed-loop callers at concurrency 1, 8 and 64, targets interleaved
 * per cell so machine noise hits all three alike.
 *
 * On the local cluster (real controller, real runtimed and Runtime Server, pods as host
 * processes): `KRT_CLUSTER_DIR=/tmp/krt-x KUBECONFIG=/tmp/krt-x/admin.kubeconfig
 * bun bench/function-invoke/main.ts [--duration-ms 3000] [--warmup-ms 500] [--workers 4]`.
 * Writes bench/results/function-invoke-<date>.{json,md}.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Run, RunResource, type Runtime } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, getRuntime, installCrds } from "../../controller/testing/cluster/objects.ts";
import {
  encodeInvokeRequest,
  encodeServerInvokeRequest,
  fromBinary,
  InvokeResponseSchema,
  wrapResult,
} from "../../runtimed/dataplane/dataplane-client.ts";
import { eventually, testCluster, testNamespace } from "../../test/support/cluster.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { machineInfo } from "../hotpath/machine.ts";
import { closedLoop, type LoadResult } from "./load.ts";
import { rawUnary } from "./raw-client.ts";
import { renderReport } from "./report.ts";

const { values: args } = parseArgs({
  options: {
    "duration-ms": { type: "string", default: "3000" },
    "warmup-ms": { type: "string", default: "500" },
    workers: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "1,8,64" },
    out: { type: "string", default: `function-invoke-${new Date().toISOString().slice(0, 10)}` },
  },
});
const DURATION = Number(args["duration-ms"]);
const WARMUP = Number(args["warmup-ms"]);
const WORKERS = Number(args.workers);
const ROUNDS = Number(args.rounds);
const CONCURRENCY = (args.concurrency as string).split(",").map(Number);

const cluster = testCluster();
if (!cluster?.local) {
  console.error("needs the local cluster: set KRT_CLUSTER_DIR and KUBECONFIG (see the module comment)");
  process.exit(2);
}
const client = cluster.client;

const SOURCES = {
  python: "def handler(request):\n    return request.body\n",
  bash: "handler() {\n  cat\n}\n",
} as const;
type Lang = keyof typeof SOURCES;

/** A one-pod Runtime of `image`, room for 8 Runs. */
const runtime = (name: string, image: string): Runtime => imageRuntime(name, image, { replicas: 1 });

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return Number(text.trim());
}

await installCrds(client);
const ns = await testNamespace(client, "krt-bench-fn");
const ctl = startController({
  namespace: ns.name,
  kubeconfig: cluster.kubeconfig,
  runtimed: "real",
  flags: [`--dataplane-subjects=system:serviceaccount:${ns.name}:bench`],
});
const echo = Bun.spawn(["bun", join(import.meta.dir, "echo-server.ts")], { stdout: "pipe" });
try {
  await ctl.waitFor("scheduling and reconciling");
  await client.create(path(R.serviceAccounts, ns.name), { metadata: { name: "bench" } });
  const token = (
    await client.create<{ status: { token: string } }>(`${path(R.serviceAccounts, ns.name, "bench")}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: ["kruntimes-dataplane"], expirationSeconds: 3600 },
    })
  ).status.token;
  await createRuntime(client, ns.name, runtime("python", "ghcr.io/kruntimes/python"));
  await createRuntime(client, ns.name, runtime("bash", "ghcr.io/kruntimes/bash"));
  for (const name of ["python", "bash"])
    await eventually(
      `Runtime ${name} available`,
      async () => (await getRuntime(client, ns.name, name)).status?.availableReplicas === 1,
      120_000,
    );

  const echoPort = await firstLine(echo.stdout);
  const targets: Record<Lang, { run: Run; ip: string; socket: string }> = {} as never;
  for (const lang of ["python", "bash"] as const) {
    await client.create(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name: lang },
      spec: {
        runtime: lang,
        source: { inline: SOURCES[lang] },
        mode: { function: { concurrency: WORKERS } },
      },
    });
    const run = await eventually(
      `${lang} function Ready`,
      async () => {
        const r = await client.get<Run>(path(RunResource, ns.name, lang));
        if (r.status?.phase === "Failed") throw new Error(`${lang}: ${r.status.message}`);
        return r.status?.phase === "Ready" ? r : undefined;
      },
      60_000,
    );
    const pod = await client.get<{ status: { podIP: string } }>(
      path(R.pods, ns.name, run.status?.endpoint?.pod as string),
    );
    const podsDir = join(cluster.local.stateDir, "node", "pods");
    const dir = readdirSync(podsDir).find((d) => d.endsWith(`_${run.status?.endpoint?.podUID}`));
    if (!dir) throw new Error(`no pod directory for ${run.status?.endpoint?.pod}`);
    targets[lang] = {
      run,
      ip: pod.status.podIP,
      socket: join(podsDir, dir, "volumes", "krt-socket", "runtime.sock"),
    };
  }

  const body = new TextEncoder().encode(JSON.stringify({ hello: "world", n: 42 }));
  const results: { round: number; lang: Lang; target: string; result: LoadResult }[] = [];
  const cells: { lang: Lang; calls: Record<string, (i: number) => Promise<void>> }[] = [];
  for (const lang of ["python", "bash"] as const) {
    const t = targets[lang];
    const e = t.run.status?.endpoint;
    const fence = {
      namespace: ns.name,
      runName: lang,
      runUid: t.run.metadata.uid ?? "",
      podUid: e?.podUID ?? "",
      attempt: e?.attempt ?? 1,
    };
    const dp = {
      url: `http://${t.ip}:8444/kruntimes.dataplane.v1.FunctionDataplaneService/Invoke`,
      headers: { authorization: `Bearer ${token}` },
    };
    const server = {
      url: "http://runtime-server/kruntimes.runtime.v1.FunctionService/Invoke",
      unix: t.socket,
      headers: {},
    };
    // The answer is checked (decoded) on every call of every target, so each pays the same.
    const check = (bytes: Uint8Array, wrapped: boolean) => {
      const r = fromBinary(InvokeResponseSchema, wrapped ? bytes : wrapResult(bytes));
      if (r.result?.handlerError) throw new Error(r.result.handlerError.message);
      if (r.result?.body.length !== body.length) throw new Error("wrong answer");
    };
    const calls: Record<string, (i: number) => Promise<void>> = {
      "runtimed dataplane": async (i) =>
        check(
          await rawUnary(
            dp,
            encodeInvokeRequest({ fence, invocationId: `b${i}`, body, contentType: "application/json" }),
          ),
          true,
        ),
      "Runtime Server (socket)": async (i) =>
        check(
          await rawUnary(
            server,
            encodeServerInvokeRequest({
              runUid: fence.runUid,
              attempt: fence.attempt,
              invocationId: `s${i}`,
              body,
              contentType: "application/json",
            }),
          ),
          false,
        ),
      "Bun HTTP echo": async () => {
        const r = await fetch(`http://127.0.0.1:${echoPort}/`, {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        });
        if ((await r.arrayBuffer()).byteLength !== body.length) throw new Error("wrong answer");
      },
    };
    cells.push({ lang, calls });
  }
  // Rounds outermost, targets innermost: the three targets of a cell run back to back, and a
  // burst of other work on the machine lands in one round, not in one target's every number.
  for (let round = 1; round <= ROUNDS; round++)
    for (const { lang, calls } of cells)
      for (const c of CONCURRENCY)
        for (const [target, call] of Object.entries(calls)) {
          const result = await closedLoop(call, c, DURATION, WARMUP);
          results.push({ round, lang, target, result });
          console.log(
            `round ${round} ${lang.padEnd(6)} c=${String(c).padEnd(3)} ${target.padEnd(24)} p50 ${result.latency.p50.toFixed(3)} ms  p99 ${result.latency.p99.toFixed(3)} ms  ${Math.round(result.perSecond)}/s  failures ${result.failures}`,
          );
        }
  const meta = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    durationMs: DURATION,
    warmupMs: WARMUP,
    workers: WORKERS,
    rounds: ROUNDS,
    body: `${body.length} bytes JSON`,
  };
  const out = join(import.meta.dir, "..", "results", args.out as string);
  writeFileSync(`${out}.json`, `${JSON.stringify({ ...meta, results }, null, 2)}\n`);
  writeFileSync(`${out}.md`, renderReport(meta, results));
  console.log(`wrote ${out}.json and ${out}.md`);
} finally {
  echo.kill();
  await client.delete(path(RunResource, ns.name, "python")).catch(() => {});
  await client.delete(path(RunResource, ns.name, "bash")).catch(() => {});
  await Bun.sleep(2000);
  ctl.kill();
  await ctl.exited;
  await ns.remove();
}
