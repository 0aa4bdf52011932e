/**
 * The CLI's one error type: a message that says what went wrong, a hint that says what to do,
 * and the exit code from `exit-codes.ts`. `CliError.from(unknown)` maps every other error here.
 */
import { type ClusterConnection, KubeconfigError, KubeError } from "@kruntimes/kube";
import { UsageError } from "clipanion";
import { ExitCode } from "./exit-codes.ts";

export class CliError extends Error {
  override name = "CliError";
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }

  static usage(message: string, hint?: string): CliError {
    return new CliError(ExitCode.Usage, message, hint);
  }

  /** `conn`: the API server the command talked to, so a connection failure can name it. */
  static from(e: unknown, conn?: Pick<ClusterConnection, "server" | "contextName" | "source">): CliError {
    if (e instanceof CliError) return e;
    if (e instanceof UsageError) return CliError.usage(e.message, "see `krt <command> --help`");
    if (e instanceof KubeconfigError) return new CliError(ExitCode.Config, e.message);
    if (e instanceof KubeError) return fromKube(e);
    if (isConnectionError(e)) return unreachable(e as Error, conn);
    if (e instanceof Error && e.name === "AbortError")
      return new CliError(ExitCode.Unavailable, "the request to the cluster was aborted (timed out)");
    return new CliError(
      ExitCode.Internal,
      `unexpected error: ${e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e)}`,
      "this is a bug in krt: rerun with KRT_DEBUG=1 for the stack trace and report it",
    );
  }
}

/** A file a flag names could not be read: what is wrong with it, in words (exit 64). */
export function unreadable(flag: string, file: string, e: unknown): CliError {
  const code = (e as { code?: string }).code ?? "";
  const why: Record<string, string> = {
    ENOENT: "no such file",
    EACCES: "permission denied",
    EPERM: "permission denied",
    EISDIR: "it is a directory",
    ENOTDIR: "a parent of it is not a directory",
  };
  return CliError.usage(
    `${flag} ${file}: cannot read it: ${why[code] ?? (e instanceof Error ? e.message : String(e))}`,
    "check the path (relative paths start at the current directory; - reads stdin where the flag allows it)",
  );
}

/** `POST /apis/kruntimes.io/v1alpha1/namespaces/x/runs` → `create runs.kruntimes.io in namespace x`. */
export function describeRequest(method: string, path: string): string {
  const verbs: Record<string, string> = {
    GET: "get",
    POST: "create",
    PUT: "update",
    PATCH: "patch",
    DELETE: "delete",
    WATCH: "watch",
  };
  const m =
    /^\/apis?\/(?:([^/]+)\/)?v[^/]+(?:\/namespaces\/([^/]+))?\/([^/?]+)(?:\/([^/?]+))?(?:\/([^/?]+))?/.exec(
      path,
    );
  const verb = verbs[method] ?? method.toLowerCase();
  if (!m) return `${verb} ${path}`;
  const group = path.startsWith("/apis/") ? m[1] : undefined;
  const resource = group ? `${m[3]}.${group}` : m[3];
  const sub = m[5] ? `/${m[5]}` : "";
  const name = m[4] ? ` "${decodeURIComponent(m[4])}"` : "";
  const ns = m[2] ? ` in namespace "${decodeURIComponent(m[2])}"` : "";
  const listVerb = method === "GET" && !m[4] ? "list" : verb;
  return `${listVerb} ${resource}${sub}${name}${ns}`;
}

function fromKube(e: KubeError): CliError {
  const what = describeRequest(e.method, e.path);
  switch (e.code) {
    case 401:
      return new CliError(
        ExitCode.Forbidden,
        `not authenticated: the API server refused the credentials (${what})`,
        "check the user of your kubeconfig context; the token or certificate may have expired",
      );
    case 403:
      return new CliError(
        ExitCode.Forbidden,
        `forbidden: you may not ${what}: ${e.message}`,
        "ask a cluster admin for a Role granting that verb on that resource, or use another --context",
      );
    case 404:
      return new CliError(ExitCode.NotFound, `not found: ${e.message}`);
    case 409:
      return new CliError(ExitCode.Conflict, `conflict: ${e.message}`);
    case 400:
    case 422:
      return new CliError(ExitCode.Invalid, `rejected by the API server: ${e.message}`);
    default:
      return new CliError(ExitCode.Internal, `${what} failed: HTTP ${e.code}: ${e.message}`);
  }
}

/** What a connection failure means, in words (Bun and Node name the same failures differently). */
export function connectionFailure(e: Error): { what: string; tls: boolean } {
  const code = (e as { code?: string }).code ?? "";
  const m = `${code} ${e.message}`;
  if (/ECONNREFUSED|ConnectionRefused/i.test(m)) return { what: "connection refused", tls: false };
  if (/ENOTFOUND|EAI_AGAIN/.test(m)) return { what: "the host name does not resolve", tls: false };
  if (/ETIMEDOUT/.test(m)) return { what: "the connection timed out", tls: false };
  if (/EHOSTUNREACH/.test(m)) return { what: "no route to the host", tls: false };
  if (/CERT|SELF_SIGNED|ALTNAME|UNABLE_TO_VERIFY/.test(code))
    return { what: `its TLS certificate does not verify (${code})`, tls: true };
  if (/ECONNRESET|ConnectionClosed|socket connection was closed/i.test(m))
    return { what: "the connection was closed", tls: false };
  return { what: e.message, tls: false };
}

function unreachable(
  e: Error,
  conn?: Pick<ClusterConnection, "server" | "contextName" | "source">,
): CliError {
  const { what, tls } = connectionFailure(e);
  if (!conn)
    return new CliError(
      ExitCode.Unavailable,
      `cannot reach the cluster: ${what}`,
      "check that the cluster is running and that --kubeconfig/--context (or KUBECONFIG) point at it",
    );
  const from =
    conn.source === "in-cluster"
      ? "the in-cluster service account"
      : `context "${conn.contextName ?? "?"}" of ${conn.source ?? "the kubeconfig"}`;
  return new CliError(
    ExitCode.Unavailable,
    `cannot reach the Kubernetes API server ${conn.server} (${from}): ${what}`,
    tls
      ? "the kubeconfig's certificate-authority may belong to another cluster; check the cluster entry of that context"
      : "check that the cluster is running and reachable from here (`kubectl cluster-info`), or choose another with --context / --kubeconfig (KUBECONFIG)",
  );
}

function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: string }).code ?? "";
  return (
    /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ConnectionRefused|FailedToOpenSocket|ConnectionClosed|UNABLE_TO_VERIFY_LEAF_SIGNATURE|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT_ALTNAME_INVALID|CERT_HAS_EXPIRED)$/.test(
      code,
    ) || /Unable to connect|ECONNREFUSED|socket connection was closed/i.test(e.message)
  );
}
