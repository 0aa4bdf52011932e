/** Runtimes, Runs and Runtime Pods for integration tests, on the real apiserver. */
import { crds, type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { Pod } from "../../kube-types.ts";
import { podReady } from "../../kube-types.ts";

/** Applies the kruntimes CRDs (server-side, forced) and waits until each is Established. */
export async function installCrds(client: KubeClient): Promise<void> {
  for (const crd of crds)
    await client.apply(path(R.crds, undefined, crd.metadata.name), crd, "kruntimes-tests", true);
  for (const crd of crds) {
    for (let i = 0; ; i++) {
      const got = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        path(R.crds, undefined, crd.metadata.name),
      );
      if (got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      if (i === 300) throw new Error(`CRD ${crd.metadata.name} not Established after 30s`);
      await Bun.sleep(100);
    }
  }
}

export function runtimeManifest(
  name: string,
  o: { replicas?: number; capacity?: Record<string, number>; env?: { name: string; value: string }[] } = {},
): Runtime {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Runtime",
    metadata: { name },
    spec: {
      replicas: o.replicas ?? 1,
      capacity: o.capacity ?? { runs: 4 },
      template: {
        spec: {
          terminationGracePeriodSeconds: 2,
          containers: [
            { name: "runtime", image: "busybox", command: ["sleep", "infinity"], env: o.env ?? [] },
          ],
        },
      },
    },
  } as Runtime;
}

export function runManifest(name: string, runtime: string, spec: Partial<Run["spec"]> = {}): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name },
    spec: { runtime, mode: { task: { args: ["true"] } }, ...spec },
  } as Run;
}

export function createRuntime(client: KubeClient, ns: string, rt: Runtime): Promise<Runtime> {
  return client.create<Runtime>(path(RuntimeResource, ns), rt);
}

export function getRuntime(client: KubeClient, ns: string, name: string): Promise<Runtime> {
  return client.get<Runtime>(path(RuntimeResource, ns, name));
}

export function getRun(client: KubeClient, ns: string, name: string): Promise<Run> {
  return client.get<Run>(path(RunResource, ns, name));
}

/** Creates Runs with bounded concurrency; returns when all exist. */
export async function createRuns(
  client: KubeClient,
  ns: string,
  runs: Run[],
  concurrency = 25,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const run = runs[next++] as Run;
      await client.create(path(RunResource, ns), run);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

export async function runtimePods(client: KubeClient, ns: string, runtime: string): Promise<Pod[]> {
  const list = await client.list<Pod>(path(R.pods, ns), { labelSelector: `kruntimes.io/runtime=${runtime}` });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

export async function readyPods(client: KubeClient, ns: string, runtime: string): Promise<Pod[]> {
  return (await runtimePods(client, ns, runtime)).filter(podReady);
}

/** Test controls of the heartbeat stand-in, on the pod's loopback IP. */
export async function heartbeatControl(
  pod: Pod,
  action: "pause" | "resume" | "unready" | "ready",
): Promise<void> {
  const res = await fetch(`http://${pod.status?.podIP}:8081/${action}`, { method: "POST" });
  if (!res.ok) throw new Error(`${action} on ${pod.metadata.name}: HTTP ${res.status}`);
}
