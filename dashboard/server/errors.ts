/**
 * The dashboard API's one error shape, `{status, reason, message, next?}`: what went wrong in the
 * caller's terms (a 403 names the verb, the resource and the namespace) and what to do next.
 */

import { CliError } from "@kruntimes/krt/errors.ts";
import { ExitCode } from "@kruntimes/krt/exit-codes.ts";
import { KubeError } from "@kruntimes/kube";
import { WriteRefused } from "./read-only-client.ts";

export type ErrorReason =
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "BadRequest"
  | "Unavailable"
  | "Internal";

/** krt's exit codes (errors of the krt code the dashboard reuses: logs, gateway discovery) as HTTP. */
const CLI_STATUS: Partial<Record<number, [number, ErrorReason]>> = {
  [ExitCode.NotFound]: [404, "NotFound"],
  [ExitCode.Forbidden]: [403, "Forbidden"],
  [ExitCode.Unavailable]: [503, "Unavailable"],
};

export class DashboardError extends Error {
  override name = "DashboardError";
  constructor(
    readonly status: number,
    readonly reason: ErrorReason,
    message: string,
    readonly next?: string,
  ) {
    super(message);
  }

  toJSON() {
    return { status: this.status, reason: this.reason, message: this.message, next: this.next };
  }

  toResponse(): Response {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.status === 405) headers.allow = "GET, HEAD";
    return new Response(JSON.stringify(this.toJSON()), { status: this.status, headers });
  }

  /**
   * `what`: the request in words, e.g. `list runs in namespace "team-a"`, so a 403 reads
   * "you may not list runs in namespace "team-a"".
   */
  static from(e: unknown, what?: string): DashboardError {
    if (e instanceof DashboardError) return e;
    if (e instanceof WriteRefused)
      return new DashboardError(405, "MethodNotAllowed", e.message, "the dashboard only reads");
    if (e instanceof KubeError) {
      const doing = what ?? `${e.method} ${e.path}`;
      if (e.code === 401)
        return new DashboardError(
          401,
          "Unauthorized",
          "the apiserver did not accept your token",
          "sign in again with a valid token (e.g. `kubectl create token <serviceaccount>`)",
        );
      if (e.code === 403)
        return new DashboardError(
          403,
          "Forbidden",
          `you may not ${doing}`,
          "ask for a Role that grants it, or pick another namespace",
        );
      if (e.code === 404) return new DashboardError(404, "NotFound", `${doing}: not found`);
      return new DashboardError(e.code >= 500 ? 502 : e.code, "Unavailable", `${doing}: ${e.message}`);
    }
    if (e instanceof CliError) {
      const [status, reason] = CLI_STATUS[e.exitCode] ?? [400, "BadRequest"];
      return new DashboardError(status, reason, e.message, e.hint);
    }
    if (
      e instanceof Error &&
      (e.name === "AbortError" || /ECONNREFUSED|ConnectionRefused|timed out/i.test(e.message))
    )
      return new DashboardError(503, "Unavailable", `cannot reach the apiserver: ${e.message}`, "try again");
    return new DashboardError(500, "Internal", e instanceof Error ? e.message : String(e));
  }
}
