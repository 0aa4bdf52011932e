/** Waits until the cluster can run pods: the node is Ready and the default ServiceAccount exists. */
import { KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";

interface NodeLike {
  metadata: { name?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

export async function waitForNodeAndServiceAccount(
  kubeconfig: string,
  nodeName: string,
  deadline: number,
  check: () => void,
): Promise<void> {
  const client = new KubeClient(loadKubeconfigFile(kubeconfig));
  let last = "";
  while (Date.now() < deadline) {
    check();
    try {
      const node = await client.get<NodeLike>(path(R.nodes, undefined, nodeName));
      const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      if (ready) {
        await client.get(path(R.serviceAccounts, "default", "default"));
        return;
      }
      last = `node ${nodeName} not Ready yet`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await Bun.sleep(100);
  }
  throw new Error(`cluster not usable in time: ${last}`);
}
