/**
 * The controller's configuration: flags (`--name=value` or `--name value`) over environment
 * variables (`KRT_NAME`) over defaults, parsed once at start into a typed object that is passed
 * down. No module reads the environment after this. `--help` prints this table.
 */
import { hostname } from "node:os";
import { parseDuration } from "@kruntimes/api";
import pkg from "./package.json" with { type: "json" };

type Kind = "string" | "int" | "duration" | "bool" | "list";

interface Flag {
  kind: Kind;
  help: string;
  default?: string;
}

/** Every flag, its kind, its default (as text) and what it does. */
export const FLAGS = {
  kubeconfig: { kind: "string", help: "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)" },
  context: { kind: "string", help: "kubeconfig context" },
  namespace: { kind: "string", help: "watch only this namespace (default: all namespaces)" },
  "metrics-host": {
    kind: "string",
    default: "0.0.0.0",
    help: "address of the /metrics, /healthz, /readyz server",
  },
  "metrics-port": { kind: "int", default: "8080", help: "port of that server; 0 picks a free one" },
  "log-level": { kind: "string", default: "info", help: "pino level: trace, debug, info, warn, error" },
  "leader-elect": { kind: "bool", default: "true", help: "hold a Lease so only one controller is active" },
  "leader-election-namespace": {
    kind: "string",
    help: "namespace of the leader Lease (default: $POD_NAMESPACE or kruntimes-system)",
  },
  "leader-election-id": { kind: "string", default: "kruntimes-controller", help: "name of the leader Lease" },
  identity: { kind: "string", help: "this process's holder identity (default: hostname_random)" },
  "leader-lease-duration": {
    kind: "duration",
    default: "4s",
    help: "how long a leader's Lease is valid without renewal (bounds failover after a crash)",
  },
  "leader-renew-deadline": {
    kind: "duration",
    default: "3s",
    help: "a leader that cannot renew this long steps down (exits); below the lease duration",
  },
  "leader-retry-period": {
    kind: "duration",
    default: "1s",
    help: "how often to renew (one Lease write each) or try to acquire",
  },
  "field-manager": {
    kind: "string",
    default: "kruntimes-controller",
    help: "server-side apply field manager",
  },
  "runtimed-image": {
    kind: "string",
    default: `ghcr.io/kruntimes/runtimed:${pkg.version}`,
    help: "image of the injected runtimed sidecar",
  },
  "runtimed-command": {
    kind: "list",
    help: "comma-separated command replacing runtimed's entrypoint (debug builds, test stand-ins)",
  },
  "runtimed-port": {
    kind: "int",
    default: "8081",
    help: "runtimed's HTTP port (/readyz, /healthz, dataplane)",
  },
  "heartbeat-lease-duration": {
    kind: "duration",
    default: "10s",
    help: "leaseDurationSeconds runtimed puts on its heartbeat Lease",
  },
  "heartbeat-interval": { kind: "duration", default: "2s", help: "how often runtimed renews its heartbeat" },
  "heartbeat-stale-after": {
    kind: "duration",
    default: "15s",
    help: "a pod silent this long loses its Runs (PodUnhealthy)",
  },
  "scheduled-start-timeout": {
    kind: "duration",
    default: "30s",
    help: "a Run Scheduled this long without starting is taken back",
  },
  "assume-ttl": {
    kind: "duration",
    default: "30s",
    help: "how long a bind may stay unconfirmed by the informer",
  },
  "bind-concurrency": { kind: "int", default: "32", help: "bind patches in flight at once" },
  "waiting-reason-delay": {
    kind: "duration",
    default: "1s",
    help: "how long a Run waits before its waiting reason is written (InsufficientCapacity: see --capacity-wait-reason-delay)",
  },
  "capacity-wait-reason-delay": {
    kind: "duration",
    default: "10s",
    help: "how long a Run waits for capacity before InsufficientCapacity is written; never shorter than --waiting-reason-delay",
  },
  "parked-flush": {
    kind: "duration",
    default: "5m",
    help: "Runs parked this long are retried anyway (safety net)",
  },
  "warm-pool-max": {
    kind: "int",
    default: "8",
    help: "most warm interpreters per runtime container (KRT_WARM_POOL = capacity.runs/4, at least 2); 0 leaves the Runtime Server's default; the template's own KRT_WARM_POOL wins",
  },
  "runtime-resync": { kind: "duration", default: "10m", help: "re-apply every Runtime's objects this often" },
  "dataplane-port": {
    kind: "int",
    default: "8444",
    help: "runtimed's dataplane port (named dataplane; function invocations from the gateway)",
  },
  "dataplane-subjects": {
    kind: "list",
    default: "",
    help: "comma-separated usernames runtimed lets call its dataplane, e.g. system:serviceaccount:kruntimes:kruntimes-gateway (empty: nobody)",
  },
  "session-max-queued-total": {
    kind: "int",
    default: "4096",
    help: "rendered into every runtimed: mutations queued in all sessions of one runtimed together; more are refused RESOURCE_EXHAUSTED (429)",
  },
  "session-close-deadline": {
    kind: "duration",
    default: "30s",
    help: "rendered into every runtimed: how long a draining session's running operations may finish (runtimed → Runtime Server Close DRAIN deadline)",
  },
  "dataplane-network-policy": {
    kind: "bool",
    default: "false",
    help: "render a NetworkPolicy per Runtime: the dataplane port only from the gateway pods, other ports from anywhere",
  },
  "gateway-namespace": {
    kind: "string",
    help: "namespace of the gateway pods the NetworkPolicy admits (default: each Runtime's own namespace)",
  },
  "gateway-pod-labels": {
    kind: "list",
    default: "app.kubernetes.io/name=kruntimes-gateway",
    help: "labels (k=v,k=v) selecting the gateway pods the NetworkPolicy admits to the dataplane port",
  },
  "webhook-port": {
    kind: "int",
    default: "0",
    help: "HTTPS port of the PersistentWorkspace admission webhook (POST /validate); 0 = not served",
  },
  "webhook-host": { kind: "string", default: "0.0.0.0", help: "address the admission webhook listens on" },
  "webhook-cert-file": {
    kind: "string",
    help: "PEM certificate of the admission webhook (re-read when it changes)",
  },
  "webhook-key-file": { kind: "string", help: "PEM private key of the admission webhook" },
  "webhook-controller-user": {
    kind: "string",
    help: "the controller's own username (system:serviceaccount:<ns>:<name>): the webhook lets it use only the workspaces it manages (default: from $POD_NAMESPACE and $SERVICE_ACCOUNT_NAME)",
  },
} satisfies Record<string, Flag>;

export type FlagName = keyof typeof FLAGS;

export interface ControllerOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  metricsHost: string;
  metricsPort: number;
  logLevel: string;
  leaderElect: boolean;
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  fieldManager: string;
  runtimedImage: string;
  runtimedCommand?: string[];
  runtimedPort: number;
  heartbeatLeaseSeconds: number;
  heartbeatIntervalMs: number;
  staleAfterMs: number;
  startTimeoutMs: number;
  assumeTtlMs: number;
  bindConcurrency: number;
  waitingReasonDelayMs: number;
  /** InsufficientCapacity's delay: a pool that is merely busy frees a slot soon, so it waits longer. */
  capacityWaitReasonDelayMs: number;
  parkedFlushMs: number;
  runtimeResyncMs: number;
  warmPoolMax: number;
  dataplanePort: number;
  dataplaneSubjects: string[];
  sessionMaxQueuedTotal: number;
  sessionCloseDeadlineMs: number;
  dataplaneNetworkPolicy: boolean;
  gatewayNamespace?: string;
  gatewayPodLabels: Record<string, string>;
  /** The PersistentWorkspace admission webhook; absent when not served. */
  webhook?: { host: string; port: number; certFile: string; keyFile: string; controllerUser: string };
}

export class OptionsError extends Error {
  override name = "OptionsError";
}

const envName = (flag: string) => `KRT_${flag.toUpperCase().replaceAll("-", "_")}`;

/** Raw text per flag: argv wins over env. */
function collect(argv: readonly string[], env: Record<string, string | undefined>): Map<FlagName, string> {
  const out = new Map<FlagName, string>();
  for (const name of Object.keys(FLAGS) as FlagName[]) {
    const v = env[envName(name)];
    if (v !== undefined && v !== "") out.set(name, v);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) throw new OptionsError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    const name = (eq >= 0 ? arg.slice(2, eq) : arg.slice(2)) as FlagName;
    const spec: Flag | undefined = FLAGS[name];
    if (!spec) throw new OptionsError(`unknown flag --${name} (see --help)`);
    let value = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (value === undefined) {
      const next = argv[i + 1];
      if (spec.kind === "bool" && (next === undefined || next.startsWith("--"))) value = "true";
      else if (next === undefined) throw new OptionsError(`--${name} needs a value`);
      else value = argv[++i] as string;
    }
    out.set(name, value);
  }
  return out;
}

function convert(name: FlagName, kind: Kind, text: string): string | number | boolean | string[] {
  switch (kind) {
    case "string":
      return text;
    case "int": {
      const n = Number(text);
      if (!Number.isInteger(n) || n < 0)
        throw new OptionsError(`--${name}: "${text}" is not a non-negative integer`);
      return n;
    }
    case "duration":
      try {
        return parseDuration(text);
      } catch (e) {
        throw new OptionsError(`--${name}: ${(e as Error).message}`);
      }
    case "bool":
      if (text === "true" || text === "1") return true;
      if (text === "false" || text === "0") return false;
      throw new OptionsError(`--${name}: "${text}" is not true or false`);
    case "list":
      return text.split(",").filter(Boolean);
  }
}

export function parseOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): ControllerOptions {
  const raw = collect(argv, env);
  const get = <T>(name: FlagName): T | undefined => {
    const spec: Flag = FLAGS[name];
    const text = raw.get(name) ?? spec.default;
    return text === undefined ? undefined : (convert(name, spec.kind, text) as T);
  };
  const o: ControllerOptions = {
    kubeconfig: get("kubeconfig"),
    context: get("context"),
    namespace: get("namespace"),
    metricsHost: get("metrics-host") as string,
    metricsPort: get("metrics-port") as number,
    logLevel: get("log-level") as string,
    leaderElect: get("leader-elect") as boolean,
    leaseNamespace: get<string>("leader-election-namespace") ?? env.POD_NAMESPACE ?? "kruntimes-system",
    leaseName: get("leader-election-id") as string,
    identity: get<string>("identity") ?? `${hostname()}_${crypto.randomUUID().slice(0, 8)}`,
    leaseDurationMs: get("leader-lease-duration") as number,
    renewDeadlineMs: get("leader-renew-deadline") as number,
    retryPeriodMs: get("leader-retry-period") as number,
    fieldManager: get("field-manager") as string,
    runtimedImage: get("runtimed-image") as string,
    runtimedCommand: get("runtimed-command"),
    runtimedPort: get("runtimed-port") as number,
    heartbeatLeaseSeconds: Math.ceil((get("heartbeat-lease-duration") as number) / 1000),
    heartbeatIntervalMs: get("heartbeat-interval") as number,
    staleAfterMs: get("heartbeat-stale-after") as number,
    startTimeoutMs: get("scheduled-start-timeout") as number,
    assumeTtlMs: get("assume-ttl") as number,
    bindConcurrency: Math.max(1, get("bind-concurrency") as number),
    waitingReasonDelayMs: get("waiting-reason-delay") as number,
    capacityWaitReasonDelayMs: Math.max(
      get("capacity-wait-reason-delay") as number,
      get("waiting-reason-delay") as number,
    ),
    parkedFlushMs: get("parked-flush") as number,
    runtimeResyncMs: get("runtime-resync") as number,
    warmPoolMax: Math.max(0, get("warm-pool-max") as number),
    dataplanePort: get("dataplane-port") as number,
    dataplaneSubjects: get<string[]>("dataplane-subjects") ?? [],
    sessionMaxQueuedTotal: Math.max(1, get("session-max-queued-total") as number),
    sessionCloseDeadlineMs: get("session-close-deadline") as number,
    dataplaneNetworkPolicy: get("dataplane-network-policy") as boolean,
    gatewayNamespace: get("gateway-namespace"),
    gatewayPodLabels: labelMap("gateway-pod-labels", get<string[]>("gateway-pod-labels") ?? []),
  };
  const webhookPort = get("webhook-port") as number;
  if (webhookPort > 0) {
    const certFile = get<string>("webhook-cert-file");
    const keyFile = get<string>("webhook-key-file");
    const sa = env.SERVICE_ACCOUNT_NAME;
    const controllerUser =
      get<string>("webhook-controller-user") ??
      (env.POD_NAMESPACE && sa ? `system:serviceaccount:${env.POD_NAMESPACE}:${sa}` : undefined);
    if (webhookPort > 65535)
      throw new OptionsError("--webhook-port must be a port (1-65535), or 0 to turn it off");
    if (!certFile || !keyFile)
      throw new OptionsError("--webhook-port needs --webhook-cert-file and --webhook-key-file (HTTPS only)");
    if (!controllerUser)
      throw new OptionsError(
        "--webhook-port needs --webhook-controller-user (or $POD_NAMESPACE and $SERVICE_ACCOUNT_NAME): the webhook must know the controller's own identity",
      );
    o.webhook = { host: get("webhook-host") as string, port: webhookPort, certFile, keyFile, controllerUser };
  }
  if (o.dataplanePort < 1 || o.dataplanePort > 65535 || o.dataplanePort === o.runtimedPort) {
    throw new OptionsError("--dataplane-port must be a port (1-65535) other than --runtimed-port");
  }
  if (o.dataplaneNetworkPolicy && Object.keys(o.gatewayPodLabels).length === 0) {
    throw new OptionsError(
      "--dataplane-network-policy needs --gateway-pod-labels (or it would admit every pod)",
    );
  }
  if (!(o.renewDeadlineMs < o.leaseDurationMs)) {
    throw new OptionsError("--leader-renew-deadline must be shorter than --leader-lease-duration");
  }
  if (!(o.retryPeriodMs < o.renewDeadlineMs)) {
    throw new OptionsError("--leader-retry-period must be shorter than --leader-renew-deadline");
  }
  if (o.staleAfterMs < o.heartbeatLeaseSeconds * 1000) {
    throw new OptionsError("--heartbeat-stale-after must be at least --heartbeat-lease-duration");
  }
  return o;
}

/** `k=v` items as a label map. */
function labelMap(flag: FlagName, items: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new OptionsError(`--${flag}: "${item}" is not key=value`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1).trim();
  }
  return out;
}

export function helpText(): string {
  const rows = Object.entries(FLAGS).map(([name, f]) => {
    const def = "default" in f ? ` (default ${f.default})` : "";
    return `  --${name.padEnd(28)} ${f.help}${def}\n  ${"".padEnd(30)} env ${envName(name)}`;
  });
  return `usage: bun controller/main.ts [flags]\n\n${rows.join("\n")}\n`;
}
