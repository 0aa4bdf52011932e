/**
 * The global flags every command shares, resolved once into a typed, defaulted object: the
 * cluster connection, the namespace scope and the output format. No module reads env itself.
 */
import { type ClusterConnection, KubeClient, resolveConnection } from "@kruntimes/kube";
import { buildInfo } from "./build-info.ts";
import { CliError } from "./errors.ts";

export const OUTPUT_FORMATS = ["table", "wide", "json", "yaml", "name"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The flags as clipanion parsed them: all optional. */
export interface RawGlobalFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
  output?: string;
}

export interface GlobalOptions {
  /** Explicit kubeconfig path; otherwise $KUBECONFIG, in-cluster, ~/.kube/config (kubectl's order). */
  kubeconfig?: string;
  /** Context name; default: the kubeconfig's current-context. */
  context?: string;
  /** Namespace given with -n; otherwise the context's namespace (resolved with the connection). */
  namespace?: string;
  /** -A: list across all namespaces (list commands only). Default false. */
  allNamespaces: boolean;
  /** -o; default `table`. */
  output: OutputFormat;
}

export function resolveGlobals(flags: RawGlobalFlags): GlobalOptions {
  const output = (flags.output ?? "table") as OutputFormat;
  if (!OUTPUT_FORMATS.includes(output))
    throw CliError.usage(`unknown output format "${flags.output}"`, `use -o ${OUTPUT_FORMATS.join("|")}`);
  if (flags.allNamespaces && flags.namespace)
    throw CliError.usage("--namespace and --all-namespaces exclude each other", "pass only one of them");
  return {
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    namespace: flags.namespace,
    allNamespaces: flags.allNamespaces ?? false,
    output,
  };
}

/** A client plus the namespace commands act in. */
export interface Session {
  client: KubeClient;
  conn: ClusterConnection;
  namespace: string;
}

export function connect(opts: GlobalOptions, env: Record<string, string | undefined>): Session {
  const conn = resolveConnection({ kubeconfig: opts.kubeconfig, context: opts.context, env });
  const client = new KubeClient(conn, { userAgent: `krt/${buildInfo.version}` });
  return { client, conn, namespace: opts.namespace ?? conn.namespace };
}
