/**
 * The local cluster has no kube-proxy, so a Service's ClusterIP leads nowhere — and the apiserver
 * calls admission webhooks (the chart's), aggregated APIs and service proxies at ClusterIPs. It is
 * started with an EgressSelectorConfiguration whose `cluster` egress is this HTTP CONNECT proxy
 * (kube-apiserver's own mechanism for reaching a cluster network it is not on): a CONNECT to a
 * ClusterIP:port is sent to a Ready pod behind that Service (its selector, the port's targetPort);
 * any other address (a pod IP, a kubelet) is dialled as it is. A Unix socket: nothing else can use it.
 */
import { rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { KubeClient as Client, type KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";

interface Service {
  metadata: { namespace?: string; name?: string };
  spec?: {
    clusterIP?: string;
    selector?: Record<string, string>;
    ports?: { port: number; targetPort?: number | string; protocol?: string }[];
  };
}

interface Pod {
  metadata: { labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { containers?: { ports?: { name?: string; containerPort: number }[] }[] };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/**
 * Writes the apiserver's egress selector configuration sending `cluster` traffic to the proxy's
 * Unix socket (HTTP CONNECT over TCP would have to be TLS).
 */
export function writeEgressConfig(file: string, socket: string): void {
  writeFileSync(
    file,
    [
      "apiVersion: apiserver.k8s.io/v1beta1",
      "kind: EgressSelectorConfiguration",
      "egressSelections:",
      "  - name: cluster",
      "    connection:",
      "      proxyProtocol: HTTPConnect",
      "      transport:",
      "        uds:",
      `          udsName: ${socket}`,
      "",
    ].join("\n"),
  );
}

/** Where a CONNECT target really is: a pod behind a ClusterIP, else the address itself. */
export async function resolveTarget(
  client: KubeClient,
  host: string,
  port: number,
): Promise<{ host: string; port: number }> {
  const services = (await client.list<Service>(path(R.services))).items;
  const svc = services.find((s) => s.spec?.clusterIP === host);
  if (!svc) return { host, port };
  const sp = svc.spec?.ports?.find((p) => p.port === port && (p.protocol ?? "TCP") === "TCP");
  if (!sp || !svc.spec?.selector)
    throw new Error(
      `service ${svc.metadata.namespace}/${svc.metadata.name} has no TCP port ${port} with a selector`,
    );
  const selector = Object.entries(svc.spec.selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = (
    await client.list<Pod>(path(R.pods, svc.metadata.namespace), { labelSelector: selector })
  ).items.filter(
    (p) =>
      !p.metadata.deletionTimestamp &&
      p.status?.podIP &&
      p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
  if (!pods.length)
    throw new Error(`no ready pod behind service ${svc.metadata.namespace}/${svc.metadata.name}`);
  const pod = pods[Math.floor(Math.random() * pods.length)] as Pod;
  const target = sp.targetPort ?? sp.port;
  const targetPort =
    typeof target === "number"
      ? target
      : pod.spec?.containers?.flatMap((c) => c.ports ?? []).find((p) => p.name === target)?.containerPort;
  if (!targetPort) throw new Error(`pod behind ${svc.metadata.name} has no port named ${target}`);
  return { host: pod.status?.podIP as string, port: targetPort };
}

/** Starts the proxy on the Unix socket `socket`; `kubeconfig` is an admin's. */
export function startServiceProxy(
  socket: string,
  kubeconfig: string,
  log: (line: string) => void,
): Promise<Server> {
  // Made on first use: the kubeconfig is written once the control plane has its certificates.
  let client: KubeClient | undefined;
  const server = createServer((sock: Socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > 8192) sock.destroy();
        return;
      }
      sock.off("data", onData);
      sock.pause();
      const rest = head.subarray(end + 4);
      const m = /^CONNECT ([^\s:]+|\[[^\]]+\]):(\d+) HTTP\/1\.[01]\r\n/.exec(head.toString("latin1"));
      if (!m) {
        sock.end("HTTP/1.1 405 Method Not Allowed\r\n\r\n");
        return;
      }
      const host = (m[1] as string).replace(/^\[|\]$/g, "");
      const port = Number(m[2]);
      client ??= new Client(loadKubeconfigFile(kubeconfig));
      resolveTarget(client, host, port).then(
        (t) => {
          const upstream = createConnection({ host: t.host, port: t.port }, () => {
            sock.write("HTTP/1.1 200 Connection established\r\n\r\n");
            if (rest.length) upstream.write(rest);
            sock.pipe(upstream);
            upstream.pipe(sock);
            sock.resume();
          });
          upstream.on("error", (e) => {
            log(`connect ${host}:${port} → ${t.host}:${t.port}: ${e.message}`);
            if (!sock.destroyed) sock.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
          });
          sock.on("error", () => upstream.destroy());
          sock.on("close", () => upstream.destroy());
          upstream.on("close", () => sock.destroy());
        },
        (e: Error) => {
          log(`connect ${host}:${port}: ${e.message}`);
          sock.end("HTTP/1.1 503 Service Unavailable\r\n\r\n");
        },
      );
    };
    sock.on("data", onData);
    sock.on("error", () => sock.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    rmSync(socket, { force: true });
    server.listen(socket, () => resolve(server));
  });
}
