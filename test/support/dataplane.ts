/**
 * What the suites and benchmarks that call runtimed's dataplane port directly share (e2e
 * function-runs and session-runs): a caller's ServiceAccount token with the dataplane audience, and
 * a pod's dataplane address — from the Runtime's EndpointSlices when they list the pod, else from
 * the Pod itself (the local cluster's pod IPs are loopback addresses, which EndpointSlices may not
 * carry).
 */
import { type KubeClient, path, R } from "@kruntimes/kube";
import { createServiceAccount, DATAPLANE_AUDIENCE, saToken } from "./gateway.ts";

/** ServiceAccount `sa` (created unless it is there already) and a token for it with `audience`. */
export async function callerToken(
  client: KubeClient,
  ns: string,
  sa: string,
  audience: string = DATAPLANE_AUDIENCE,
): Promise<string> {
  await createServiceAccount(client, ns, sa).catch(() => {});
  return saToken(client, ns, sa, audience);
}

/**
 * `http://<pod IP>:<port>` of the `dataplane` port of pod `pod`'s runtimed container, read from the
 * Pod; throws when the pod is no longer `podUID`.
 */
export async function podDataplaneAddress(
  client: KubeClient,
  ns: string,
  pod: string,
  podUID: string,
): Promise<string> {
  const p = await client.get<{
    metadata: { uid: string };
    spec: { containers: { name: string; ports?: { name?: string; containerPort: number }[] }[] };
    status: { podIP?: string };
  }>(path(R.pods, ns, pod));
  if (p.metadata.uid !== podUID) throw new Error(`pod ${pod} is not ${podUID} any more`);
  const port = p.spec.containers
    .find((c) => c.name === "runtimed")
    ?.ports?.find((x) => x.name === "dataplane")?.containerPort;
  return `http://${p.status.podIP}:${port}`;
}

/**
 * The dataplane address of a pod: from Runtime `runtime`'s EndpointSlices (what the gateway uses)
 * when they list it, else {@link podDataplaneAddress}.
 */
export async function dataplaneAddress(
  client: KubeClient,
  ns: string,
  runtime: string,
  pod: string,
  podUID: string,
): Promise<string> {
  const slices = await client.list<{
    ports?: { name?: string; port?: number }[];
    endpoints?: { addresses: string[]; targetRef?: { uid?: string } }[] | null;
  }>(path({ group: "discovery.k8s.io", version: "v1", plural: "endpointslices" }, ns), {
    labelSelector: `kubernetes.io/service-name=${runtime}`,
  });
  for (const s of slices.items) {
    const port = s.ports?.find((p) => p.name === "dataplane")?.port;
    const ep = s.endpoints?.find((e) => e.targetRef?.uid === podUID);
    if (port && ep?.addresses[0]) return `http://${ep.addresses[0]}:${port}`;
  }
  return podDataplaneAddress(client, ns, pod, podUID);
}
