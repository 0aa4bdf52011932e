/**
 * The node agent's configuration: one JSON file, parsed and defaulted once at start, then passed
 * down as a typed object. No module reads the environment or the file again.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

export interface AgentConfig {
  /** Node object name; the client certificate must be CN=system:node:<nodeName>. */
  nodeName: string;
  kubeconfig: string;
  /** Pod directories, logs, volumes and the process registry live here. */
  stateDir: string;
  /** Relative image-map paths (entrypoints, working dirs) resolve against this directory. */
  repoRoot: string;
  imageMapFile: string;
  /** Each pod gets one address of this loopback range, e.g. 127.1.0.0/16. */
  podIpRange: string;
  /** The kubelet log endpoint (TLS); 0 disables it. */
  kubeletPort: number;
  servingCertFile: string;
  servingKeyFile: string;
  /** Client certificates of the log endpoint must chain to this CA (the apiserver's kubelet client). */
  clientCaFile: string;
  /** Injected into every container as KUBERNETES_SERVICE_HOST/PORT. */
  apiserverHost: string;
  apiserverPort: number;
  allocatable: { cpu: string; memory: string; pods: string };
  /** First restart delay of a crashing container; doubles per crash up to restartBackoffMaxMs. */
  restartBackoffInitialMs: number;
  restartBackoffMaxMs: number;
  /** Lease renewal period (the node lifecycle controller watches the lease). Default 10 s. */
  leaseRenewMs: number;
  /** Full node status write period even when nothing changed. Default 30 s. */
  nodeStatusMs: number;
  /** Every pod is re-synced at least this often (volume refresh, token rotation). Default 30 s. */
  podResyncMs: number;
  /** How long SIGTERM of the agent waits for pod processes before SIGKILL. Default 8 s. */
  shutdownGraceMs: number;
  /** pino level. Default "info". */
  logLevel: string;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const DEFAULTS = {
  podIpRange: "127.1.0.0/16",
  kubeletPort: 0,
  servingCertFile: "",
  servingKeyFile: "",
  clientCaFile: "",
  apiserverHost: "127.0.0.1",
  apiserverPort: 6443,
  allocatable: { cpu: "8", memory: "16Gi", pods: "110" },
  restartBackoffInitialMs: 1000,
  restartBackoffMaxMs: 30_000,
  leaseRenewMs: 10_000,
  nodeStatusMs: 30_000,
  podResyncMs: 30_000,
  shutdownGraceMs: 8000,
  logLevel: "info",
} satisfies Partial<AgentConfig>;

const REQUIRED = ["nodeName", "kubeconfig", "stateDir", "repoRoot", "imageMapFile"] as const;
const PATHS = [
  "kubeconfig",
  "stateDir",
  "repoRoot",
  "imageMapFile",
  "servingCertFile",
  "servingKeyFile",
  "clientCaFile",
] as const;

/** Validates a parsed config object; relative paths resolve against `baseDir` (the config file's dir). */
export function resolveConfig(raw: Partial<AgentConfig>, baseDir: string): AgentConfig {
  for (const k of REQUIRED) {
    if (typeof raw[k] !== "string" || raw[k] === "")
      throw new ConfigError(`config: "${k}" is required (a string)`);
  }
  const cfg = {
    ...DEFAULTS,
    ...raw,
    allocatable: { ...DEFAULTS.allocatable, ...raw.allocatable },
  } as AgentConfig;
  for (const k of PATHS) {
    if (cfg[k] && !isAbsolute(cfg[k])) cfg[k] = resolve(baseDir, cfg[k]);
  }
  if (cfg.kubeletPort && !(cfg.servingCertFile && cfg.servingKeyFile && cfg.clientCaFile)) {
    throw new ConfigError("config: kubeletPort needs servingCertFile, servingKeyFile and clientCaFile");
  }
  if (cfg.restartBackoffInitialMs <= 0 || cfg.restartBackoffMaxMs < cfg.restartBackoffInitialMs) {
    throw new ConfigError("config: need 0 < restartBackoffInitialMs <= restartBackoffMaxMs");
  }
  return cfg;
}

/** Reads `--config <file>` from argv. */
export function loadConfig(argv: string[]): AgentConfig {
  const i = argv.indexOf("--config");
  const file = i >= 0 ? argv[i + 1] : undefined;
  if (!file) throw new ConfigError("usage: bun test/localcluster/node-agent/main.ts --config <file.json>");
  let raw: Partial<AgentConfig>;
  try {
    raw = JSON.parse(readFileSync(file, "utf8")) as Partial<AgentConfig>;
  } catch (e) {
    throw new ConfigError(`config ${file}: ${e instanceof Error ? e.message : e}`);
  }
  return resolveConfig(raw, resolve(file, ".."));
}
