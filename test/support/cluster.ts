/**
 * What an integration test knows about the cluster it runs against: always a KUBECONFIG, and,
 * for the local cluster, the supervisor's control socket (restart components) and test tokens.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import type { ClusterInfo } from "../localcluster/supervisor.ts";

export interface TestCluster {
  kubeconfig: string;
  client: KubeClient;
  /** Present only on the local cluster. */
  local?: ClusterInfo;
}

export function testCluster(): TestCluster | undefined {
  const kubeconfig = process.env.KUBECONFIG;
  if (!kubeconfig) return undefined;
  const dir = process.env.KRT_CLUSTER_DIR;
  const infoFile = dir ? join(dir, "cluster.json") : undefined;
  const local =
    infoFile && existsSync(infoFile)
      ? (JSON.parse(readFileSync(infoFile, "utf8")) as ClusterInfo)
      : undefined;
  return { kubeconfig, client: new KubeClient(loadKubeconfigFile(kubeconfig)), local };
}

/** Every node agent's state directory (a cluster.json from before several nodes: node 1's only). */
export function nodeStateDirs(info: ClusterInfo): string[] {
  return info.nodes?.map((n) => n.stateDir) ?? [join(info.stateDir, "node")];
}

/**
 * SIGKILLs one container's process group, found in the process registry of whichever node agent
 * runs the pod; that agent restarts it per restartPolicy.
 */
export function killLocalContainer(
  info: ClusterInfo,
  namespace: string,
  pod: string,
  container: string,
): void {
  signalLocalContainer(info, namespace, pod, container, "SIGKILL");
}

/** Sends `signal` to one container's process group (SIGSTOP/SIGCONT freeze and thaw it). */
export function signalLocalContainer(
  info: ClusterInfo,
  namespace: string,
  pod: string,
  container: string,
  signal: NodeJS.Signals,
): void {
  type Rec = { pgid: number; pod: string; container: string };
  for (const dir of nodeStateDirs(info).map((d) => join(d, "processes"))) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      let rec: Rec;
      try {
        rec = JSON.parse(readFileSync(join(dir, f), "utf8")) as Rec;
      } catch {
        continue; // written or removed under us
      }
      if (rec.pod === `${namespace}/${pod}` && rec.container === container) {
        process.kill(-rec.pgid, signal);
        return;
      }
    }
  }
  throw new Error(`no ${container} process recorded for ${namespace}/${pod} on any node`);
}

/** Asks the local cluster's supervisor to stop/start/restart a component. */
export async function controlComponent(
  info: ClusterInfo,
  component: string,
  action: "stop" | "start" | "restart",
): Promise<void> {
  const res = await fetch(`http://localhost/components/${component}/${action}`, {
    method: "POST",
    unix: info.controlSocket,
  } as RequestInit);
  if (!res.ok) throw new Error(`${action} ${component}: ${await res.text()}`);
}

/** A namespace of its own for one test file; deleted by the returned function. */
export async function testNamespace(
  client: KubeClient,
  prefix: string,
): Promise<{ name: string; remove(): Promise<void> }> {
  const ns = await client.create<{ metadata: { name: string } }>(path(R.namespaces), {
    metadata: { generateName: `${prefix}-` },
  });
  const name = ns.metadata.name;
  // Pods need the default ServiceAccount, which kube-controller-manager creates asynchronously.
  for (let i = 0; i < 200; i++) {
    try {
      await client.get(path(R.serviceAccounts, name, "default"));
      break;
    } catch {
      await Bun.sleep(50);
    }
  }
  return {
    name,
    async remove() {
      await client.delete(path(R.namespaces, undefined, name)).catch(() => {});
    },
  };
}

/** Polls `fn` until it returns a truthy value or the timeout passes; the error names what it waited for. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await Bun.sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${last ? `: ${last}` : ""}`);
}
