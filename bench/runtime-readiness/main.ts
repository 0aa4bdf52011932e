/**
 * How fast a Runtime's status follows its pods' readiness: a controller process for a fresh
 * namespace, a two-pod pool whose runtimed is the heartbeat stand-in; each round turns one pod's
 * readiness endpoint off and on and times until `status.readyReplicas` drops to 1 and until the
 * Ready condition is True again. runtimed's readiness probe runs every 2 s and needs 2 failures,
 * so "down" is bounded below by the kubelet (~2–4 s), "up" by one probe period.
 * The integration test only checks that status follows; the speed is measured here.
 * Usage: KUBECONFIG=… bun bench/runtime-readiness/main.ts [--rounds 5]
 */
import { parseArgs } from "node:util";
import { KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import {
  createRuntime,
  getRuntime,
  heartbeatControl,
  installCrds,
  readyPods,
  runtimeManifest,
} from "../../controller/testing/cluster/objects.ts";
import { eventually, testNamespace } from "../../test/support/cluster.ts";

const kubeconfig = process.env.KUBECONFIG;
if (!kubeconfig) {
  console.error("error: set KUBECONFIG to the cluster to benchmark (the local cluster: its node agent)");
  process.exit(78);
}
const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error("error: --rounds must be a positive integer");
  process.exit(64);
}

const client = new KubeClient(loadKubeconfigFile(kubeconfig));
await installCrds(client);
const ns = await testNamespace(client, "krt-bench-readiness");
const ctl = startController({ namespace: ns.name, kubeconfig });
const ready = (rt: Awaited<ReturnType<typeof getRuntime>>) =>
  rt.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
const down: number[] = [];
const up: number[] = [];
try {
  await ctl.waitFor("scheduling and reconciling");
  await createRuntime(client, ns.name, runtimeManifest("pool", { replicas: 2, capacity: { runs: 3 } }));
  await eventually(
    "pool Ready with 2 pods",
    async () => {
      const rt = await getRuntime(client, ns.name, "pool");
      return ready(rt) && rt.status?.readyReplicas === 2;
    },
    120_000,
  );
  for (let i = 0; i < rounds; i++) {
    const [pod] = await readyPods(client, ns.name, "pool");
    if (!pod) throw new Error("no ready pod");
    const t0 = performance.now();
    await heartbeatControl(pod, "unready");
    await eventually(
      "readyReplicas 1",
      async () => (await getRuntime(client, ns.name, "pool")).status?.readyReplicas === 1,
      60_000,
    );
    down.push(performance.now() - t0);
    const t1 = performance.now();
    await heartbeatControl(pod, "ready");
    await eventually(
      "Ready again with 2 pods",
      async () => {
        const rt = await getRuntime(client, ns.name, "pool");
        return ready(rt) && rt.status?.readyReplicas === 2;
      },
      60_000,
    );
    up.push(performance.now() - t1);
    console.log(
      `round ${i + 1}: down after ${down.at(-1)?.toFixed(0)} ms, up after ${up.at(-1)?.toFixed(0)} ms`,
    );
  }
} finally {
  ctl.kill();
  await ctl.exited;
  await client.delete(path(R.namespaces, undefined, ns.name)).catch(() => {});
}
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]?.toFixed(0)}, median ${s[Math.floor(s.length / 2)]?.toFixed(0)}, max ${s.at(-1)?.toFixed(0)}`;
};
console.log(`readiness in Runtime status (ms): down ${summary(down)}; up ${summary(up)}`);
