/**
 * Where `krt invoke` reaches the gateway, in this order:
 *
 * 1. `--gateway URL` or `$KRT_GATEWAY`: used as is.
 * 2. The gateway Service (label `app.kubernetes.io/name=kruntimes-gateway` in `--gateway-namespace`):
 *    its ready EndpointSlice addresses are tried directly. Pod IPs are reachable from inside the
 *    cluster, from nodes, over VPNs into the pod network, and on the local test cluster.
 * 3. Otherwise a port-forward to one ready gateway pod, opened with `kubectl port-forward` and
 *    closed when krt exits.
 *
 * The apiserver's service proxy is not an option: the apiserver removes the `Authorization`
 * header of every request it has authenticated (k8s.io/apiserver filters/authentication.go), so
 * the gateway would never see the caller's token. TLS is verified against the CA the chart
 * publishes (the ConfigMap the Service's `kruntimes.io/ca-configmap` annotation names), with the
 * Service's DNS name as the expected server name whatever address is dialled.
 */
import { isNotFound, type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { openPortForward } from "./port-forward.ts";

const ENDPOINT_SLICES = { group: "discovery.k8s.io", version: "v1", plural: "endpointslices" };
export const GATEWAY_LABEL = "app.kubernetes.io/name=kruntimes-gateway";
export const CA_ANNOTATION = "kruntimes.io/ca-configmap";
export const VIA = ["auto", "direct", "port-forward"] as const;
export type Via = (typeof VIA)[number];

export interface GatewayTls {
  /** PEM bundle to trust instead of the system store. */
  ca?: string;
  /** Name the certificate must be valid for (the Service's DNS name when dialling an IP). */
  serverName?: string;
  /** --insecure-skip-tls-verify. */
  rejectUnauthorized?: false;
}

export interface GatewayTarget {
  baseUrl: string;
  tls: GatewayTls;
  /** How it was reached, for messages: "url", "direct <ip>", "port-forward <pod>". */
  via: string;
  close(): void;
}

export interface LocateOptions {
  url?: string;
  namespace: string;
  via: Via;
  insecure: boolean;
  /** PEM read from --ca-file. */
  ca?: string;
  /** For `kubectl port-forward`: the same cluster krt talks to. */
  kubectl: { bin: string; kubeconfig?: string; context?: string };
  /** How long one direct connection attempt may take. */
  dialTimeoutMs: number;
}

interface Service {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    ports?: { name?: string; port: number; targetPort?: number | string }[];
    selector?: Record<string, string>;
  };
}
interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  spec?: { containers?: { ports?: { name?: string; containerPort: number }[] }[] };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
interface EndpointSlice {
  ports?: { name?: string; port?: number }[];
  endpoints?: {
    addresses: string[];
    conditions?: { ready?: boolean; terminating?: boolean };
    targetRef?: { kind?: string; name?: string };
  }[];
}
interface ConfigMap {
  data?: Record<string, string>;
}

export interface GatewayEndpoint {
  address: string;
  port: number;
  pod?: string;
}

/** The gateway Service's scheme, CA and ready endpoints, read from the cluster. */
export interface DiscoveredGateway {
  service: string;
  scheme: "https" | "http";
  serverName: string;
  ca?: string;
  endpoints: GatewayEndpoint[];
}

export async function locateGateway(client: KubeClient, o: LocateOptions): Promise<GatewayTarget> {
  if (o.url) return fromUrl(client, o);
  const gw = await discoverGateway(client, o.namespace);
  const tls = tlsFor(gw.scheme, o, gw.ca, gw.serverName);
  if (gw.endpoints.length === 0)
    throw new CliError(
      ExitCode.Unavailable,
      `the gateway Service ${o.namespace}/${gw.service} has no ready pod`,
      `check it with \`kubectl -n ${o.namespace} get pods -l ${GATEWAY_LABEL}\``,
    );
  if (o.via !== "port-forward") {
    const ep = await firstDialable(shuffle(gw.endpoints), o.dialTimeoutMs);
    if (ep)
      return {
        baseUrl: `${gw.scheme}://${hostPort(ep.address, ep.port)}`,
        tls,
        via: `direct ${ep.address}`,
        close() {},
      };
    if (o.via === "direct")
      throw new CliError(
        ExitCode.Unavailable,
        `cannot connect to any gateway pod of ${o.namespace}/${gw.service} (${gw.endpoints.map((e) => hostPort(e.address, e.port)).join(", ")})`,
        "outside the cluster's pod network use --gateway-via port-forward, or --gateway <URL> of an Ingress/LoadBalancer",
      );
  }
  const ep = gw.endpoints.find((e) => e.pod);
  if (!ep?.pod)
    throw new CliError(ExitCode.Unavailable, `the gateway's EndpointSlices name no pod to port-forward to`);
  const pf = await openPortForward({ ...o.kubectl, namespace: o.namespace, pod: ep.pod, port: ep.port });
  return {
    baseUrl: `${gw.scheme}://127.0.0.1:${pf.localPort}`,
    tls,
    via: `port-forward ${ep.pod}`,
    close: () => pf.close(),
  };
}

export async function discoverGateway(client: KubeClient, namespace: string): Promise<DiscoveredGateway> {
  const services = await readable(
    () => client.list<Service>(path(R.services, namespace), { labelSelector: GATEWAY_LABEL }),
    `list services in namespace "${namespace}"`,
  );
  if (services.items.length === 0)
    throw new CliError(
      ExitCode.NotFound,
      `no gateway Service (label ${GATEWAY_LABEL}) in namespace "${namespace}"`,
      "install the chart with gateway.enabled=true, pass --gateway-namespace <namespace of the release>, or --gateway <URL>",
    );
  if (services.items.length > 1)
    throw CliError.usage(
      `${services.items.length} gateway Services in namespace "${namespace}": ${services.items.map((s) => s.metadata.name).join(", ")}`,
      "pick one with --gateway https://<service>.<namespace>.svc",
    );
  const svc = services.items[0] as Service;
  const name = svc.metadata.name;
  const scheme = svc.spec.ports?.some((p) => p.name === "https") ? "https" : "http";
  const caName = svc.metadata.annotations?.[CA_ANNOTATION];
  let ca: string | undefined;
  if (scheme === "https" && caName) {
    const cm = await readable(
      () => client.get<ConfigMap>(path(R.configMaps, namespace, caName)),
      `get configmap "${caName}" in namespace "${namespace}"`,
    );
    ca = cm.data?.["ca.crt"];
  }
  const slices = await readable(
    () =>
      client.list<EndpointSlice>(path(ENDPOINT_SLICES, namespace), {
        labelSelector: `kubernetes.io/service-name=${name}`,
      }),
    `list endpointslices in namespace "${namespace}"`,
  );
  const endpoints: GatewayEndpoint[] = [];
  for (const s of slices.items) {
    const port = s.ports?.find((p) => p.name === scheme)?.port;
    if (!port) continue;
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false || e.conditions?.terminating) continue;
      for (const address of e.addresses.slice(0, 1))
        endpoints.push({
          address,
          port,
          ...(e.targetRef?.kind === "Pod" && e.targetRef.name ? { pod: e.targetRef.name } : {}),
        });
    }
  }
  if (endpoints.length === 0) endpoints.push(...(await podEndpoints(client, namespace, svc, scheme)));
  return { service: name, scheme, serverName: `${name}.${namespace}.svc`, ...(ca ? { ca } : {}), endpoints };
}

/**
 * The Service's ready pods, when its EndpointSlices list none: EndpointSlice validation refuses
 * loopback addresses, so on the local test cluster (pods on 127.x addresses) the slices stay
 * empty. Needs list on pods; without it the slices' answer (no ready pod) stands.
 */
async function podEndpoints(
  client: KubeClient,
  namespace: string,
  svc: Service,
  scheme: string,
): Promise<GatewayEndpoint[]> {
  const selector = Object.entries(svc.spec.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const target = svc.spec.ports?.find((p) => p.name === scheme)?.targetPort;
  if (!selector || target === undefined) return [];
  const pods = await client
    .list<Pod>(path(R.pods, namespace), { labelSelector: selector })
    .catch(() => ({ items: [] as Pod[] }));
  const out: GatewayEndpoint[] = [];
  for (const p of pods.items) {
    const ready = p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    const ip = p.status?.podIP;
    if (!ready || !ip || p.metadata.deletionTimestamp) continue;
    const port =
      typeof target === "number"
        ? target
        : p.spec?.containers?.flatMap((c) => c.ports ?? []).find((cp) => cp.name === target)?.containerPort;
    if (port) out.push({ address: ip, port, pod: p.metadata.name });
  }
  return out;
}

/** --gateway URL: its own host is the server name; the chart's CA is added to the system roots. */
async function fromUrl(client: KubeClient, o: LocateOptions): Promise<GatewayTarget> {
  let url: URL;
  try {
    url = new URL(o.url as string);
  } catch {
    throw CliError.usage(
      `--gateway "${o.url}" is not a URL`,
      "e.g. --gateway https://kruntimes-gateway.kruntimes.svc",
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw CliError.usage(`--gateway "${o.url}" must be an http:// or https:// URL`);
  let ca = o.ca;
  if (url.protocol === "https:" && !ca && !o.insecure) {
    // Best effort: a port-forward or an in-cluster name is verified by the chart's CA too.
    const chartCa = await discoverGateway(client, o.namespace).then(
      (g) => g.ca,
      () => undefined,
    );
    if (chartCa) ca = `${(await import("node:tls")).rootCertificates.join("\n")}\n${chartCa}`;
  }
  const tls: GatewayTls = o.insecure ? { rejectUnauthorized: false } : ca ? { ca } : {};
  return { baseUrl: url.toString().replace(/\/$/, ""), tls, via: "url", close() {} };
}

function tlsFor(scheme: string, o: LocateOptions, ca: string | undefined, serverName: string): GatewayTls {
  if (scheme !== "https") return {};
  if (o.insecure) return { rejectUnauthorized: false };
  const trusted = o.ca ?? ca;
  return { ...(trusted ? { ca: trusted } : {}), serverName };
}

/** Discovery reads the cluster with the user's rights; say which right is missing. */
async function readable<T>(read: () => Promise<T>, what: string): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof KubeError && e.code === 403)
      throw new CliError(
        ExitCode.Forbidden,
        `cannot find the gateway: you may not ${what}`,
        "the chart's gateway.discovery Role grants it to every authenticated user; or pass --gateway <URL>",
      );
    if (isNotFound(e)) throw new CliError(ExitCode.NotFound, `cannot find the gateway: ${what}: not found`);
    throw e;
  }
}

/**
 * The first endpoint a TCP connection opens to, all tried at once: outside the pod network a
 * connection attempt may hang until the timeout, so trying one after another would add up.
 */
function firstDialable(
  endpoints: GatewayEndpoint[],
  timeoutMs: number,
): Promise<GatewayEndpoint | undefined> {
  if (endpoints.length === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let pending = endpoints.length;
    for (const ep of endpoints)
      void canDial(ep.address, ep.port, timeoutMs).then((ok) => {
        pending--;
        if (ok) resolve(ep);
        else if (pending === 0) resolve(undefined);
      });
  });
}

async function canDial(hostname: string, port: number, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const socket = await Promise.race([
      Bun.connect({ hostname, port, socket: { data() {}, error() {} } }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    socket.end();
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const hostPort = (address: string, port: number) =>
  address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;

function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
