/** runtimed's artifact metrics, on its registry; labels are closed sets. */
import { Counter, Histogram, type Registry } from "prom-client";

export function createArtifactMetrics(registry: Registry) {
  return {
    uploads: new Counter({
      name: "kruntimes_runtimed_artifact_uploads_total",
      help: "Attempts that left artifacts, by result: ok, rejected, failed.",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
    bytes: new Counter({
      name: "kruntimes_runtimed_artifact_bytes_total",
      help: "Bytes stored as artifacts.",
      registers: [registry],
    }),
    retries: new Counter({
      name: "kruntimes_runtimed_artifact_retries_total",
      help: "Artifact uploads retried after a transient store failure.",
      registers: [registry],
    }),
    duration: new Histogram({
      name: "kruntimes_runtimed_artifact_store_seconds",
      help: "Collecting and storing one attempt's artifacts.",
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600],
      registers: [registry],
    }),
    inputSeconds: new Histogram({
      name: "kruntimes_runtimed_artifact_input_seconds",
      help: "Staging one attempt's spec.artifactInputs before its task starts, by result: ok, unavailable.",
      labelNames: ["result"] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30, 120, 600],
      registers: [registry],
    }),
    inputBytes: new Counter({
      name: "kruntimes_runtimed_artifact_input_bytes_total",
      help: "Bytes of artifact inputs fetched from the store (as stored: archives compressed).",
      registers: [registry],
    }),
    inputRetries: new Counter({
      name: "kruntimes_runtimed_artifact_input_retries_total",
      help: "Artifact input fetches retried after a transient store or API failure.",
      registers: [registry],
    }),
  };
}
export type ArtifactMetrics = ReturnType<typeof createArtifactMetrics>;
