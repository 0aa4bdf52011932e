/**
 * The dashboard's configuration: flags (`--name=value` or `--name value`) over environment
 * variables (`KRT_DASHBOARD_NAME`) over defaults, parsed once at start into a typed object.
 * `--help` prints the table. No module reads the environment after this.
 */

export type AuthMode = "token" | "kubeconfig";

export interface DashboardOptions {
  /** Address the HTTP listener binds. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * `token`: every request carries the caller's bearer token, used as is against the apiserver.
   * `kubeconfig` (local mode, `krt dashboard`): every request uses the kubeconfig's own
   * credentials; allowed only on a loopback address.
   */
  auth: AuthMode;
  kubeconfig?: string;
  context?: string;
  /** In-cluster: the apiserver's CA (the chart mounts the kube-root-ca.crt ConfigMap here). */
  caFile: string;
  /** Prebuilt web assets (the image's); unset: bundle dashboard/web at start with Bun.build. */
  assetsDir?: string;
  /** Where the gateway (function invoke) and its discovery Role live. */
  gatewayNamespace: string;
  logLevel: string;
}

export class OptionsError extends Error {
  override name = "OptionsError";
}

const FLAGS: Record<string, { env: string; default?: string; help: string }> = {
  host: { env: "KRT_DASHBOARD_HOST", default: "0.0.0.0", help: "address to listen on" },
  port: { env: "KRT_DASHBOARD_PORT", default: "8080", help: "port to listen on; 0 picks a free one" },
  auth: {
    env: "KRT_DASHBOARD_AUTH",
    default: "token",
    help: "token: callers sign in with their own bearer token; kubeconfig: local mode, the kubeconfig's credentials (loopback only)",
  },
  kubeconfig: {
    env: "KUBECONFIG",
    help: "kubeconfig for the apiserver address and CA (default: in-cluster)",
  },
  context: { env: "KRT_DASHBOARD_CONTEXT", help: "kubeconfig context" },
  "ca-file": {
    env: "KRT_DASHBOARD_CA_FILE",
    default: "/var/run/kruntimes/kube-ca/ca.crt",
    help: "in-cluster: the apiserver's CA bundle (the kube-root-ca.crt ConfigMap)",
  },
  "assets-dir": { env: "KRT_DASHBOARD_ASSETS_DIR", help: "prebuilt web assets (default: bundle at start)" },
  "gateway-namespace": {
    env: "KRT_DASHBOARD_GATEWAY_NAMESPACE",
    default: "kruntimes",
    help: "namespace of the gateway Service used by the invoke box",
  },
  "log-level": { env: "KRT_DASHBOARD_LOG_LEVEL", default: "info", help: "pino level" },
};

export function helpText(): string {
  const rows = Object.entries(FLAGS).map(
    ([name, f]) =>
      `  --${name.padEnd(20)} ${f.help}${f.default ? ` (default ${f.default})` : ""} [$${f.env}]`,
  );
  return `kruntimes dashboard: a read-only web UI for Runs and Runtimes\n\n${rows.join("\n")}\n`;
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function parseOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): DashboardOptions {
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) throw new OptionsError(`unexpected argument "${arg}" (see --help)`);
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!(name in FLAGS)) throw new OptionsError(`unknown flag --${name} (see --help)`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new OptionsError(`--${name} needs a value`);
    given.set(name, value);
  }
  const get = (name: string): string | undefined => {
    const f = FLAGS[name];
    return given.get(name) ?? (f ? env[f.env] : undefined) ?? f?.default;
  };
  const port = Number(get("port"));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new OptionsError(`--port "${get("port")}" must be a whole number from 0 to 65535`);
  const auth = get("auth");
  if (auth !== "token" && auth !== "kubeconfig")
    throw new OptionsError(`--auth "${auth}" must be token or kubeconfig`);
  const host = get("host") as string;
  if (auth === "kubeconfig" && !isLoopback(host))
    throw new OptionsError(
      `--auth kubeconfig serves your own credentials to whoever connects, so it listens on loopback only; --host "${host}" is not`,
    );
  const opt = (name: string) => {
    const v = get(name);
    return v ? v : undefined;
  };
  return {
    host,
    port,
    auth,
    kubeconfig: opt("kubeconfig")?.split(":").find(Boolean),
    context: opt("context"),
    caFile: get("ca-file") as string,
    assetsDir: opt("assets-dir"),
    gatewayNamespace: get("gateway-namespace") as string,
    logLevel: get("log-level") as string,
  };
}
