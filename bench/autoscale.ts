/**
 * How fast an autoscaled pool reacts, on a cluster whose node agent runs the real runtimed (the
 * local cluster): a controller process for a fresh namespace, then per round
 *  - backlog: a 1-pod pool (2 Runs per pod, targetUtilization 1, max 2) gets 4 Runs of `sleep 15` (longer than a pod start, so the new pod gets work);
 *    from the moment the 3rd create returns (the first Run with no room: the backlog) it times
 *    the Deployment's scale-up (seen by polling every 20 ms), the new pod created, Ready, and a Run
 *    Running on it; then waits for the pool to go back to 1;
 *  - from zero: a pool at 0 gets one Run (`echo`): times the scale-up, the first pod Ready, the
 *    Run Succeeded (the cold start a user sees); then waits for the pool to go back to 0.
 * Also reads the controller's kruntimes_autoscaler_scale_up_reaction_seconds (event → scale
 * write sent) and kruntimes_autoscaler_scale_write_seconds (sent → accepted).
 * Usage: KUBECONFIG=… bun bench/autoscale.ts [--rounds 3]
 */
import { parseArgs } from "node:util";
import { type Autoscaling, type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import type { Deployment, Pod } from "../controller/kube-types.ts";
import { podReady } from "../controller/kube-types.ts";
import { startController } from "../controller/testing/cluster/controller-process.ts";
import { installCrds, runtimePods } from "../controller/testing/cluster/objects.ts";
import { testNamespace } from "../test/support/cluster.ts";

const kubeconfig = process.env.KUBECONFIG;
if (!kubeconfig) {
  console.error("error: set KUBECONFIG to the cluster to benchmark (the local cluster: its node agent)");
  process.exit(78);
}
const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("error: --rounds must be a positive integer");
  process.exit(64);
}

const client = new KubeClient(loadKubeconfigFile(kubeconfig));
await installCrds(client);
const ns = await testNamespace(client, "krt-bench-autoscale");
const ctl = startController({ namespace: ns.name, kubeconfig, runtimed: "real" });
let n = 0;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 120_000): Promise<T> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    await Bun.sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}
const replicas = async (name: string) =>
  (await client.get<Deployment>(path(R.deployments, ns.name, name))).spec?.replicas ?? -1;
const live = async (name: string) => (await runtimePods(client, ns.name, name)) as Pod[];
async function pool(name: string, autoscaling: Autoscaling, capacity: number) {
  await client.create<Runtime>(path(RuntimeResource, ns.name), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Runtime",
    metadata: { name },
    spec: {
      capacity: { runs: capacity },
      autoscaling,
      template: {
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [{ name: "runtime", image: "ghcr.io/kruntimes/bash" }],
        },
      },
    },
  } as Runtime);
}
async function run(runtime: string, inline: string): Promise<string> {
  const name = `r${n++}`;
  await client.create<Run>(path(RunResource, ns.name), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name },
    spec: { runtime, mode: { task: {} }, source: { inline } },
  } as Run);
  return name;
}
const getRun = (name: string) => client.get<Run>(path(RunResource, ns.name, name));

const rows: { scenario: string; scale: number; podCreated: number; podReady: number; work: number }[] = [];
try {
  await ctl.waitFor("scheduling and reconciling");
  await pool("backlog", { minReplicas: 1, maxReplicas: 2, targetUtilization: 1, scaleDownDelay: "2s" }, 2);
  await pool("zero", { minReplicas: 0, maxReplicas: 1, scaleDownDelay: "2s" }, 4);
  await until("backlog pool: 1 pod Ready", async () => (await live("backlog")).filter(podReady).length === 1);
  await until(
    "zero pool at 0",
    async () => (await replicas("zero")) === 0 && (await live("zero")).length === 0,
  );
  for (let i = 0; i < rounds; i++) {
    // Backlog: 2 Runs fill the pod, the 3rd has no room.
    const before = new Set((await live("backlog")).map((p) => p.metadata.name));
    const names = [await run("backlog", "sleep 15"), await run("backlog", "sleep 15")];
    names.push(await run("backlog", "sleep 15"));
    const t0 = performance.now();
    names.push(await run("backlog", "sleep 15"));
    await until("scale-up", async () => (await replicas("backlog")) === 2);
    const scale = performance.now() - t0;
    const fresh = await until("new pod", async () =>
      (await live("backlog")).find((p) => !before.has(p.metadata.name)),
    );
    const podCreated = performance.now() - t0;
    await until("new pod Ready", async () =>
      (await live("backlog")).some((p) => p.metadata.name === fresh.metadata.name && podReady(p)),
    );
    const ready = performance.now() - t0;
    await until("a Run Running on the new pod", async () => {
      const runs = await Promise.all(names.map(getRun));
      return runs.some(
        (r) => r.status?.assignment?.pod === fresh.metadata.name && r.status?.phase !== "Pending",
      );
    });
    const work = performance.now() - t0;
    rows.push({ scenario: "backlog 1 → 2", scale, podCreated, podReady: ready, work });
    await until("backlog Runs done", async () =>
      (await Promise.all(names.map(getRun))).every((r) => r.status?.phase === "Succeeded"),
    );
    await until(
      "backlog back to 1",
      async () => (await replicas("backlog")) === 1 && (await live("backlog")).length === 1,
    );

    // From zero: one Run wakes the pool.
    const z0 = performance.now();
    const zr = await run("zero", "echo woke");
    await until("zero: scale-up", async () => (await replicas("zero")) === 1);
    const zScale = performance.now() - z0;
    const zPod = await until("zero: pod", async () => (await live("zero"))[0]);
    const zCreated = performance.now() - z0;
    await until("zero: pod Ready", async () =>
      (await live("zero")).some((p) => p.metadata.name === zPod.metadata.name && podReady(p)),
    );
    const zReady = performance.now() - z0;
    await until("zero: Run Succeeded", async () => (await getRun(zr)).status?.phase === "Succeeded");
    rows.push({
      scenario: "from zero 0 → 1",
      scale: zScale,
      podCreated: zCreated,
      podReady: zReady,
      work: performance.now() - z0,
    });
    await until(
      "zero back to 0",
      async () => (await replicas("zero")) === 0 && (await live("zero")).length === 0,
    );
    console.error(`round ${i + 1}/${rounds} done`);
  }
  const text = await (await fetch(`http://127.0.0.1:${await ctl.metricsPort()}/metrics`)).text();
  const sum = Number(/kruntimes_autoscaler_scale_up_reaction_seconds_sum (\S+)/.exec(text)?.[1]);
  const count = Number(/kruntimes_autoscaler_scale_up_reaction_seconds_count (\S+)/.exec(text)?.[1]);
  const write = Number(/kruntimes_autoscaler_scale_write_seconds_sum (\S+)/.exec(text)?.[1]);
  const ms = (v: number) => v.toFixed(0);
  console.log(
    "| scenario | → Deployment scaled (ms) | → new pod created (ms) | → pod Ready (ms) | → Run on it (ms: Running / Succeeded for zero) |",
  );
  console.log("| --- | --: | --: | --: | --: |");
  for (const r of rows)
    console.log(
      `| ${r.scenario} | ${ms(r.scale)} | ${ms(r.podCreated)} | ${ms(r.podReady)} | ${ms(r.work)} |`,
    );
  for (const scenario of new Set(rows.map((r) => r.scenario))) {
    const of = rows.filter((r) => r.scenario === scenario);
    const col = (k: "scale" | "podCreated" | "podReady" | "work") => {
      const v = of.map((r) => r[k]).sort((a, b) => a - b);
      return `${ms(v[Math.floor((v.length - 1) / 2)] as number)} / ${ms(v.at(-1) as number)}`;
    };
    console.log(
      `| **${scenario}: median / max** | ${col("scale")} | ${col("podCreated")} | ${col("podReady")} | ${col("work")} |`,
    );
  }
  console.log(
    `\nautoscaler reaction (event → scale write sent), mean over ${count}: ${((sum / count) * 1000).toFixed(0)} ms; the write accepted ${((write / count) * 1000).toFixed(0)} ms later (mean)`,
  );
} finally {
  ctl.kill();
  await ctl.exited;
  await ns.remove();
}
