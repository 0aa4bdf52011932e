/**
 * The artifact maintainer's Prometheus metrics, served on its /metrics. Every label is a closed
 * set (result, status-code class, denial reason); nothing is labelled by Run, user or artifact,
 * so a busy store cannot blow up the series count.
 */
import { Counter, collectDefaultMetrics, Registry } from "prom-client";

export type CodeClass = "2xx" | "4xx" | "5xx";
export type Denial = "unauthenticated" | "forbidden";

export interface MaintainerMetrics {
  registry: Registry;
  /** Runs whose artifacts were deleted (ok) or whose cleanup attempt failed and will be retried. */
  deletions: Counter<"result">;
  deletedObjects: Counter;
  downloads: Counter<"code">;
  bytesServed: Counter;
  denials: Counter<"reason">;
}

export function codeClass(status: number): CodeClass {
  return status >= 500 ? "5xx" : status >= 400 ? "4xx" : "2xx";
}

export function createMaintainerMetrics(defaults = true): MaintainerMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (defaults) collectDefaultMetrics({ register: registry });
  const m: MaintainerMetrics = {
    registry,
    deletions: new Counter({
      name: "kruntimes_artifact_maintainer_deletions_total",
      help: "Cleanups of deleted Runs' artifacts, by result: ok (objects gone, finalizer removed) or failed (retried).",
      labelNames: ["result"],
      registers,
    }),
    deletedObjects: new Counter({
      name: "kruntimes_artifact_maintainer_deleted_objects_total",
      help: "Objects (files) deleted from the store by cleanups.",
      registers,
    }),
    downloads: new Counter({
      name: "kruntimes_artifact_maintainer_download_requests_total",
      help: "Requests to the download endpoint, by status-code class (2xx, 4xx, 5xx).",
      labelNames: ["code"],
      registers,
    }),
    bytesServed: new Counter({
      name: "kruntimes_artifact_maintainer_download_bytes_total",
      help: "Artifact bytes actually sent to clients (counted as they stream).",
      registers,
    }),
    denials: new Counter({
      name: "kruntimes_artifact_maintainer_authorization_denials_total",
      help: "Download requests refused: unauthenticated (no or rejected token) or forbidden (may not get the Run).",
      labelNames: ["reason"],
      registers,
    }),
  };
  // Every series exists from the start, so rates and absent() work before the first event.
  for (const r of ["ok", "failed"]) m.deletions.inc({ result: r }, 0);
  for (const c of ["2xx", "4xx", "5xx"]) m.downloads.inc({ code: c }, 0);
  for (const r of ["unauthenticated", "forbidden"]) m.denials.inc({ reason: r }, 0);
  return m;
}

/** `body` passed through unchanged, adding each chunk's length to bytesServed as it is sent. */
export function countedBody(
  body: ReadableStream<Uint8Array>,
  m: MaintainerMetrics,
): ReadableStream<Uint8Array> {
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        m.bytesServed.inc(chunk.byteLength);
        ctl.enqueue(chunk);
      },
    }),
  );
}
