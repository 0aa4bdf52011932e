/**
 * The gateway's configuration: flags (`--name=value` or `--name value`) over environment variables
 * (`KRT_NAME`) over defaults, parsed once at start into a typed object that is passed down. No
 * module reads the environment after this. `--help` prints this table.
 */
import { parseDuration } from "@kruntimes/api";

type Kind = "string" | "int" | "duration" | "bytes" | "protocols";

interface Flag {
  kind: Kind;
  help: string;
  default?: string;
}

/** Every flag, its kind, its default (as text) and what it does. */
export const FLAGS = {
  protocols: {
    kind: "protocols",
    default: "http,https",
    help: "listeners to serve, a set of http and https (http = --http-port and --grpc-port)",
  },
  host: { kind: "string", default: "0.0.0.0", help: "address every listener binds" },
  "http-port": {
    kind: "int",
    default: "8080",
    help: "HTTP/1.1 (Elysia on Bun.serve): Connect JSON/binary, gRPC-Web, the plain invoke route, /openapi.json; 0 picks a free port",
  },
  "grpc-port": {
    kind: "int",
    default: "8081",
    help: "cleartext HTTP/2 (h2c, node:http2): gRPC, Connect and gRPC-Web over HTTP/2; on when http is",
  },
  "https-port": {
    kind: "int",
    default: "8443",
    help: "TLS (node:http2, ALPN h2 and http/1.1): every protocol and route",
  },
  "tls-cert-file": {
    kind: "string",
    default: "/etc/kruntimes/gateway-tls/tls.crt",
    help: "PEM certificate chain of the https listener (re-read when it changes)",
  },
  "tls-key-file": {
    kind: "string",
    default: "/etc/kruntimes/gateway-tls/tls.key",
    help: "PEM private key of the https listener",
  },
  "metrics-port": { kind: "int", default: "9090", help: "/metrics, /healthz, /readyz; 0 picks a free port" },
  "max-concurrent-requests": {
    kind: "int",
    default: "1024",
    help: "invocations in flight at once per gateway process; more are refused 429 (GATEWAY_BUSY)",
  },
  "max-request-bytes": {
    kind: "bytes",
    default: "16Mi",
    help: "largest request body (a Run's own maxRequestBytes may be lower); larger → 413",
  },
  "max-response-bytes": {
    kind: "bytes",
    default: "16Mi",
    help: "largest response body passed back; larger → RESOURCE_EXHAUSTED (RESPONSE_TOO_LARGE)",
  },
  "default-timeout": {
    kind: "duration",
    default: "30s",
    help: "deadline of a call that sends no Connect-Timeout-Ms / grpc-timeout header",
  },
  "max-timeout": { kind: "duration", default: "15m", help: "longer requested deadlines are cut to this" },
  "idle-timeout": {
    kind: "duration",
    default: "30s",
    help: "HTTP/2 connections with no request open this long are closed, and a TLS handshake must finish within it (slow or silent clients); HTTP/1.1 headers have Bun's own 10 s limit",
  },
  "auth-cache-ttl": {
    kind: "duration",
    default: "60s",
    help: "how long an allowed (token, Run) decision is reused",
  },
  "auth-deny-ttl": {
    kind: "duration",
    default: "5s",
    help: "how long a refused (token, Run) decision is reused",
  },
  "auth-cache-size": {
    kind: "int",
    default: "10000",
    help: "most decisions cached (least recently used go)",
  },
  "dataplane-token-file": {
    kind: "string",
    default: "/var/run/secrets/kruntimes.io/dataplane/token",
    help: "the gateway's token for runtimed's dataplane port (audience kruntimes-dataplane; re-read when it changes)",
  },
  "shutdown-grace": {
    kind: "duration",
    default: "20s",
    help: "on SIGTERM: /readyz fails at once, in-flight calls get this long to finish",
  },
  namespace: { kind: "string", help: "route only Runs of this namespace (default: all namespaces)" },
  kubeconfig: { kind: "string", help: "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)" },
  context: { kind: "string", help: "kubeconfig context" },
  "log-level": { kind: "string", default: "info", help: "pino level: trace, debug, info, warn, error" },
} satisfies Record<string, Flag>;

export type FlagName = keyof typeof FLAGS;
export type Protocol = "http" | "https";

export interface GatewayOptions {
  protocols: ReadonlySet<Protocol>;
  host: string;
  httpPort: number;
  grpcPort: number;
  httpsPort: number;
  tlsCertFile: string;
  tlsKeyFile: string;
  metricsPort: number;
  maxConcurrentRequests: number;
  maxRequestBytes: number;
  maxResponseBytes: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  /** `--idle-timeout`: HTTP/2 sessions with no open stream, and TLS handshakes, are cut after this. */
  idleTimeoutMs: number;
  authCacheTtlMs: number;
  authDenyTtlMs: number;
  authCacheSize: number;
  dataplaneTokenFile: string;
  shutdownGraceMs: number;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  logLevel: string;
}

export class OptionsError extends Error {
  override name = "OptionsError";
}

export const envName = (flag: string) => `KRT_${flag.toUpperCase().replaceAll("-", "_")}`;

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
};

/** Kubernetes-style byte quantity: `1048576`, `512Ki`, `16Mi`, `1G`. */
export function parseBytes(text: string): number {
  const m = /^(\d+)(k|M|G|Ki|Mi|Gi)?$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a byte size (e.g. 1048576, 512Ki, 16Mi)`);
  return Number(m[1]) * (BYTE_UNITS[m[2] ?? ""] as number);
}

function parseProtocols(text: string): Set<Protocol> {
  const out = new Set<Protocol>();
  for (const p of text.split(",").map((s) => s.trim())) {
    if (p === "") continue;
    if (p !== "http" && p !== "https") throw new Error(`"${p}" is not a protocol (http, https)`);
    out.add(p);
  }
  if (out.size === 0) throw new Error("needs at least one of http, https");
  return out;
}

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
    if (!(name in FLAGS)) throw new OptionsError(`unknown flag --${name} (see --help)`);
    let value = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined) throw new OptionsError(`--${name} needs a value`);
      value = argv[++i] as string;
    }
    out.set(name, value);
  }
  return out;
}

function convert(name: FlagName, kind: Kind, text: string): string | number | Set<Protocol> {
  try {
    switch (kind) {
      case "string":
        return text;
      case "int": {
        const n = Number(text);
        if (!Number.isInteger(n) || n < 0) throw new Error(`"${text}" is not a non-negative integer`);
        return n;
      }
      case "duration":
        return parseDuration(text);
      case "bytes":
        return parseBytes(text);
      case "protocols":
        return parseProtocols(text);
    }
  } catch (e) {
    throw new OptionsError(`--${name}: ${(e as Error).message}`);
  }
}

export function parseOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): GatewayOptions {
  const raw = collect(argv, env);
  const get = <T>(name: FlagName): T => {
    const spec: Flag = FLAGS[name];
    const text = raw.get(name) ?? spec.default;
    return (text === undefined ? undefined : convert(name, spec.kind, text)) as T;
  };
  const o: GatewayOptions = {
    protocols: get("protocols"),
    host: get("host"),
    httpPort: get("http-port"),
    grpcPort: get("grpc-port"),
    httpsPort: get("https-port"),
    tlsCertFile: get("tls-cert-file"),
    tlsKeyFile: get("tls-key-file"),
    metricsPort: get("metrics-port"),
    maxConcurrentRequests: get("max-concurrent-requests"),
    maxRequestBytes: get("max-request-bytes"),
    maxResponseBytes: get("max-response-bytes"),
    defaultTimeoutMs: get("default-timeout"),
    maxTimeoutMs: get("max-timeout"),
    idleTimeoutMs: get("idle-timeout"),
    authCacheTtlMs: get("auth-cache-ttl"),
    authDenyTtlMs: get("auth-deny-ttl"),
    authCacheSize: get("auth-cache-size"),
    dataplaneTokenFile: get("dataplane-token-file"),
    shutdownGraceMs: get("shutdown-grace"),
    namespace: get("namespace"),
    kubeconfig: get("kubeconfig"),
    context: get("context"),
    logLevel: get("log-level"),
  };
  if (o.maxConcurrentRequests < 1) throw new OptionsError("--max-concurrent-requests must be at least 1");
  if (o.defaultTimeoutMs <= 0) throw new OptionsError("--default-timeout must be positive");
  if (o.idleTimeoutMs <= 0) throw new OptionsError("--idle-timeout must be positive");
  if (o.maxTimeoutMs < o.defaultTimeoutMs)
    throw new OptionsError("--max-timeout must be at least --default-timeout");
  if (o.authDenyTtlMs > o.authCacheTtlMs)
    throw new OptionsError("--auth-deny-ttl must not exceed --auth-cache-ttl");
  if (o.maxRequestBytes < 1 || o.maxResponseBytes < 1) throw new OptionsError("byte limits must be positive");
  return o;
}

export function helpText(): string {
  const rows = Object.entries(FLAGS).map(([name, f]) => {
    const def = "default" in f ? ` (default ${f.default})` : "";
    return `  --${name.padEnd(26)} ${f.help}${def}\n  ${"".padEnd(28)} env ${envName(name)}`;
  });
  return `usage: bun gateway/main.ts [flags]\n\n${rows.join("\n")}\n`;
}
