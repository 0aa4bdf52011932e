/**
 * runtimed's options, parsed once at start from flags and the environment the controller's pod
 * template sets (downward API identity, the Runtime's name and capacity, the socket, the port,
 * the Lease timing). Flags win over the environment; everything else gets it passed down.
 */
import type { ArtifactStore } from "@kruntimes/api";

export interface RuntimedOptions {
  pod: { name: string; namespace: string; uid: string; ip: string; node: string };
  runtime: string;
  /** The Runtime's capacity per pod (`runs` = concurrent Runs). */
  capacity: Record<string, number>;
  /** The Runtime Server's Unix socket. */
  socketPath: string;
  /** Where a Run's relative entrypoint resolves (the runtime container's /workspace). */
  workspace: string;
  /** HTTP listener for /readyz, /healthz and /metrics. */
  host: string;
  port: number;
  leaseDurationSeconds: number;
  heartbeatIntervalMs: number;
  /** A Run still going this long after its start gets a Running write; shorter Runs skip it. */
  runningDelayMs: number;
  /** First delay when a status write fails with an unknown outcome (doubles up to 10 s). */
  writeRetryMs: number;
  /** Kubeconfig for running outside a pod; in a pod the service-account mount is used. */
  kubeconfig?: string;
  /** The Runtime's `spec.artifactStore`; absent when it has none (no `$KRUNTIME_ARTIFACTS_DIR`). */
  artifacts?: ArtifactOptions;
  logLevel: string;
  /** The dataplane listener (function invocations from the gateway) on `pod.ip`; 0 = off. */
  dataplane: DataplaneOptions;
  /** How long a deleted function Run's in-flight invocations may finish before they are cancelled. */
  functionDeleteDrainMs: number;
  /** Session bounds of this runtimed (all sessions it serves together). */
  sessions: SessionOptions;
}

export interface SessionOptions {
  /** Mutations waiting in the queues of all sessions of this runtimed together; more are refused busy. */
  maxQueuedTotal: number;
  /** Longest a Close(DRAIN) to the Runtime Server may wait for running operations. */
  closeDeadlineMs: number;
}

export interface DataplaneOptions {
  port: number;
  /** Usernames (TokenReview `status.user.username`) allowed to call, e.g. the gateway's ServiceAccount. */
  subjects: string[];
  /** The audience the callers' tokens must carry. */
  audience: string;
  /** How long an allowed / denied TokenReview decision is reused; the cache's bound. */
  allowTtlMs: number;
  denyTtlMs: number;
  cacheSize: number;
}

export interface ArtifactOptions {
  store: ArtifactStore;
  /** Where the filesystem store's claim is mounted into runtimed. */
  fsRoot: string;
  /** S3 credentials from the Runtime's Secret (absent: the pod's ambient credentials). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** How long transient store failures are retried before the Run ends ArtifactUploadFailed. */
  retryBudgetMs: number;
}

export class OptionsError extends Error {
  override name = "OptionsError";
}

type Kind = "string" | "int" | "json";
interface Spec {
  env?: string;
  kind: Kind;
  default?: string;
  help: string;
}

const SPECS = {
  "pod-name": { env: "POD_NAME", kind: "string", help: "this pod's name (downward API)" },
  "pod-namespace": { env: "POD_NAMESPACE", kind: "string", help: "this pod's namespace (downward API)" },
  "pod-uid": {
    env: "POD_UID",
    kind: "string",
    help: "this pod's UID (downward API); the fence of every write",
  },
  "pod-ip": { env: "POD_IP", kind: "string", default: "127.0.0.1", help: "address to listen on" },
  "node-name": { env: "NODE_NAME", kind: "string", default: "", help: "the node (for logs)" },
  runtime: { env: "KRT_RUNTIME", kind: "string", help: "the Runtime's name (Lease label)" },
  capacity: {
    env: "KRT_CAPACITY",
    kind: "json",
    default: '{"runs":8}',
    help: "the Runtime's capacity per pod (JSON)",
  },
  socket: {
    env: "KRT_SOCKET",
    kind: "string",
    default: "/var/run/kruntimes/runtime.sock",
    help: "Runtime Server socket",
  },
  workspace: {
    env: "KRT_WORKSPACE",
    kind: "string",
    default: "/workspace",
    help: "the Runs' workspace root",
  },
  port: { env: "KRT_PORT", kind: "int", default: "8081", help: "HTTP port (/readyz, /healthz, /metrics)" },
  "lease-duration-seconds": {
    env: "KRT_LEASE_DURATION_SECONDS",
    kind: "int",
    default: "10",
    help: "Lease duration",
  },
  "heartbeat-interval-ms": {
    env: "KRT_HEARTBEAT_INTERVAL_MS",
    kind: "int",
    default: "2000",
    help: "Lease renewal period",
  },
  "running-delay-ms": {
    env: "KRT_RUNNING_DELAY_MS",
    kind: "int",
    default: "500",
    help: "write Running only for Runs still going this long after their start",
  },
  "write-retry-ms": {
    kind: "int",
    default: "200",
    help: "first backoff of a status write with an unknown outcome",
  },
  kubeconfig: { kind: "string", help: "kubeconfig (outside a pod)" },
  "artifact-store": {
    env: "KRT_ARTIFACT_STORE",
    kind: "json",
    help: "the Runtime's spec.artifactStore (JSON); S3 credentials come from $AWS_ACCESS_KEY_ID/$AWS_SECRET_ACCESS_KEY",
  },
  "artifact-fs-root": {
    env: "KRT_ARTIFACT_FS_ROOT",
    kind: "string",
    default: "/var/run/kruntimes/artifact-store",
    help: "where the filesystem artifact store's claim is mounted",
  },
  "artifact-retry-budget-ms": {
    env: "KRT_ARTIFACT_RETRY_BUDGET_MS",
    kind: "int",
    default: "300000",
    help: "how long transient artifact store failures are retried",
  },
  "log-level": { env: "KRT_LOG_LEVEL", kind: "string", default: "info", help: "pino level" },
  "dataplane-port": {
    env: "KRT_DATAPLANE_PORT",
    kind: "int",
    default: "8444",
    help: "dataplane port on $POD_IP (FunctionDataplaneService, for the gateway); 0 = off",
  },
  "dataplane-subjects": {
    env: "KRT_DATAPLANE_SUBJECTS",
    kind: "string",
    default: "",
    help: "comma-separated usernames allowed on the dataplane (e.g. system:serviceaccount:kruntimes:kruntimes-gateway); empty = nobody",
  },
  "dataplane-audience": {
    env: "KRT_DATAPLANE_AUDIENCE",
    kind: "string",
    default: "kruntimes-dataplane",
    help: "audience the callers' ServiceAccount tokens must carry (TokenReview spec.audiences)",
  },
  "dataplane-auth-allow-ttl-ms": {
    kind: "int",
    default: "60000",
    help: "how long an allowed token is trusted without another TokenReview",
  },
  "dataplane-auth-deny-ttl-ms": {
    kind: "int",
    default: "5000",
    help: "how long a refused token stays refused",
  },
  "dataplane-auth-cache-size": { kind: "int", default: "1024", help: "most cached token decisions" },
  "session-max-queued-total": {
    env: "KRT_SESSION_MAX_QUEUED_TOTAL",
    kind: "int",
    default: "4096",
    help: "mutations queued in all sessions of this runtimed together; more are refused RESOURCE_EXHAUSTED",
  },
  "session-close-deadline-ms": {
    env: "KRT_SESSION_CLOSE_DEADLINE_MS",
    kind: "int",
    default: "30000",
    help: "longest runtimed lets a draining session's running operations finish (Close DRAIN deadline to the Runtime Server)",
  },
  "function-delete-drain-ms": {
    env: "KRT_FUNCTION_DELETE_DRAIN_MS",
    kind: "int",
    default: "10000",
    help: "a deleted function Run's in-flight invocations may finish this long",
  },
} as const satisfies Record<string, Spec>;
type Flag = keyof typeof SPECS;

export function usage(): string {
  const lines = Object.entries(SPECS).map(([name, s]) => {
    const sp = s as Spec;
    const env = sp.env ? ` [$${sp.env}]` : "";
    const def = sp.default ? ` (default ${sp.default})` : "";
    return `  --${name}${env}  ${sp.help}${def}`;
  });
  return `usage: bun runtimed/main.ts [flags]\n${lines.join("\n")}`;
}

function isFlag(name: string): name is Flag {
  return Object.hasOwn(SPECS, name);
}

export function parseOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): RuntimedOptions {
  const raw = new Map<Flag, string>();
  for (const [name, s] of Object.entries(SPECS) as [Flag, Spec][]) {
    const v = s.env ? env[s.env] : undefined;
    if (v !== undefined && v !== "") raw.set(name, v);
    else if (s.default !== undefined) raw.set(name, s.default);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--help" || arg === "-h") throw new OptionsError(usage());
    if (!arg.startsWith("--"))
      throw new OptionsError(`unexpected argument ${JSON.stringify(arg)}\n${usage()}`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (!isFlag(name)) throw new OptionsError(`unknown flag --${name}\n${usage()}`);
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new OptionsError(`--${name} needs a value`);
    raw.set(name, value);
  }
  const str = (f: Flag): string => {
    const v = raw.get(f);
    if (v === undefined || v === "") {
      const e = (SPECS[f] as Spec).env;
      throw new OptionsError(
        `--${f}${e ? ` (or $${e})` : ""} is required: runtimed runs in a Runtime Pod, whose template sets it`,
      );
    }
    return v;
  };
  const int = (f: Flag, min: number): number => {
    const v = str(f);
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || n < min)
      throw new OptionsError(`--${f} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
    return n;
  };
  let capacity: Record<string, number>;
  try {
    capacity = JSON.parse(str("capacity")) as Record<string, number>;
    if (typeof capacity !== "object" || capacity === null || Array.isArray(capacity))
      throw new Error("not an object");
  } catch (e) {
    throw new OptionsError(
      `--capacity must be a JSON object like {"runs":8}: ${e instanceof Error ? e.message : e}`,
    );
  }
  let artifacts: ArtifactOptions | undefined;
  if (raw.get("artifact-store")) {
    let store: ArtifactStore;
    try {
      store = JSON.parse(str("artifact-store")) as ArtifactStore;
      if (!store || typeof store !== "object" || Boolean(store.s3) === Boolean(store.filesystem))
        throw new Error("needs exactly one of s3 or filesystem");
    } catch (e) {
      throw new OptionsError(
        `--artifact-store must be a Runtime's spec.artifactStore as JSON, like {"s3":{"bucket":"b"}}: ${e instanceof Error ? e.message : e}`,
      );
    }
    const id = env.AWS_ACCESS_KEY_ID;
    const secret = env.AWS_SECRET_ACCESS_KEY;
    if (Boolean(id) !== Boolean(secret))
      throw new OptionsError(
        "$AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY must be set together (the Runtime's credentials Secret needs both keys)",
      );
    artifacts = {
      store,
      fsRoot: str("artifact-fs-root"),
      retryBudgetMs: int("artifact-retry-budget-ms", 0),
      ...(id && secret
        ? {
            credentials: {
              accessKeyId: id,
              secretAccessKey: secret,
              ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
            },
          }
        : {}),
    };
  }
  return {
    ...(artifacts ? { artifacts } : {}),
    pod: {
      name: str("pod-name"),
      namespace: str("pod-namespace"),
      uid: str("pod-uid"),
      ip: str("pod-ip"),
      node: raw.get("node-name") ?? "",
    },
    runtime: str("runtime"),
    capacity,
    socketPath: str("socket"),
    workspace: str("workspace"),
    host: str("pod-ip"),
    port: int("port", 0),
    leaseDurationSeconds: int("lease-duration-seconds", 1),
    heartbeatIntervalMs: int("heartbeat-interval-ms", 100),
    runningDelayMs: int("running-delay-ms", 0),
    writeRetryMs: int("write-retry-ms", 1),
    ...(raw.get("kubeconfig") ? { kubeconfig: raw.get("kubeconfig") } : {}),
    logLevel: str("log-level"),
    dataplane: {
      port: int("dataplane-port", 0),
      subjects: (raw.get("dataplane-subjects") ?? "")
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
      audience: str("dataplane-audience"),
      allowTtlMs: int("dataplane-auth-allow-ttl-ms", 0),
      denyTtlMs: int("dataplane-auth-deny-ttl-ms", 0),
      cacheSize: int("dataplane-auth-cache-size", 1),
    },
    functionDeleteDrainMs: int("function-delete-drain-ms", 0),
    sessions: {
      maxQueuedTotal: int("session-max-queued-total", 1),
      closeDeadlineMs: int("session-close-deadline-ms", 0),
    },
  };
}
