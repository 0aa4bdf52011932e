/**
 * Connection settings for a Kubernetes API server, read from a kubeconfig file or from the
 * in-cluster service-account mount. Parsed once; the client never reads files or env again.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { parse } from "yaml";

export interface ClusterConnection {
  server: string;
  /** PEM bundle trusted for the server certificate. */
  ca?: string;
  insecureSkipVerify?: boolean;
  cert?: string;
  key?: string;
  /** Bearer token, or a file re-read when it changes (projected service-account tokens rotate). */
  token?: string;
  tokenFile?: string;
  namespace: string;
  contextName?: string;
  /** Where the settings came from, for messages: the kubeconfig file, or "in-cluster". */
  source?: string;
}

interface RawKubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user?: string; namespace?: string } }[];
  clusters?: {
    name: string;
    cluster: {
      server: string;
      "certificate-authority"?: string;
      "certificate-authority-data"?: string;
      "insecure-skip-tls-verify"?: boolean;
    };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      tokenFile?: string;
      "client-certificate"?: string;
      "client-certificate-data"?: string;
      "client-key"?: string;
      "client-key-data"?: string;
    };
  }[];
}

export class KubeconfigError extends Error {
  override name = "KubeconfigError";
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

function fileOrData(base: string, file?: string, data?: string): string | undefined {
  if (data) return Buffer.from(data, "base64").toString("utf8");
  if (file) return readFileSync(isAbsolute(file) ? file : join(base, file), "utf8");
  return undefined;
}

/** Reads a kubeconfig file; `context` overrides current-context. */
export function loadKubeconfigFile(path: string, context?: string): ClusterConnection {
  if (!existsSync(path))
    throw new KubeconfigError(`kubeconfig ${path} does not exist; set KUBECONFIG or pass --kubeconfig`);
  let raw: RawKubeconfig;
  try {
    raw = (parse(readFileSync(path, "utf8")) ?? {}) as RawKubeconfig;
  } catch (e) {
    const first = (e instanceof Error ? (e.message.split("\n")[0] ?? "") : String(e)).replace(/:$/, "");
    throw new KubeconfigError(`kubeconfig ${path} is not valid YAML: ${first}`);
  }
  if (typeof raw !== "object")
    throw new KubeconfigError(`kubeconfig ${path} is not a kubeconfig (a YAML mapping)`);
  const ctxName = context ?? raw["current-context"];
  if (!ctxName) throw new KubeconfigError(`kubeconfig ${path} has no current-context; pass --context`);
  const ctx = raw.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new KubeconfigError(`context "${ctxName}" is not in ${path}`);
  const cluster = raw.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster)
    throw new KubeconfigError(`cluster "${ctx.cluster}" of context "${ctxName}" is not in ${path}`);
  const user = raw.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const base = dirname(path);
  return {
    server: cluster.server.replace(/\/$/, ""),
    ca: fileOrData(base, cluster["certificate-authority"], cluster["certificate-authority-data"]),
    insecureSkipVerify: cluster["insecure-skip-tls-verify"] ?? false,
    cert: fileOrData(base, user["client-certificate"], user["client-certificate-data"]),
    key: fileOrData(base, user["client-key"], user["client-key-data"]),
    token: user.token,
    tokenFile: user.tokenFile
      ? isAbsolute(user.tokenFile)
        ? user.tokenFile
        : join(base, user.tokenFile)
      : undefined,
    namespace: ctx.namespace ?? "default",
    contextName: ctxName,
    source: path,
  };
}

/** The in-cluster connection from the pod's service-account mount, or undefined outside a pod. */
export function loadInCluster(
  env: Record<string, string | undefined>,
  saDir = SA_DIR,
): ClusterConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(saDir, "token"))) return undefined;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    ca: existsSync(join(saDir, "ca.crt")) ? readFileSync(join(saDir, "ca.crt"), "utf8") : undefined,
    tokenFile: join(saDir, "token"),
    namespace: existsSync(join(saDir, "namespace"))
      ? readFileSync(join(saDir, "namespace"), "utf8").trim()
      : "default",
    source: "in-cluster",
  };
}

/**
 * kubectl's order: an explicit path, then $KUBECONFIG (first entry), then in-cluster, then ~/.kube/config.
 */
export function resolveConnection(opts: {
  kubeconfig?: string;
  context?: string;
  env: Record<string, string | undefined>;
}): ClusterConnection {
  const explicit = opts.kubeconfig ?? opts.env.KUBECONFIG?.split(":").find(Boolean);
  if (explicit) return loadKubeconfigFile(explicit, opts.context);
  const inCluster = loadInCluster(opts.env);
  if (inCluster) return inCluster;
  const home = join(opts.env.HOME ?? homedir(), ".kube", "config");
  if (existsSync(home)) return loadKubeconfigFile(home, opts.context);
  throw new KubeconfigError("no cluster configured: set KUBECONFIG, pass --kubeconfig, or run inside a pod");
}
