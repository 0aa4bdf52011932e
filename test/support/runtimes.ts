/**
 * The Runtime the suites and benchmarks on the local cluster run real Runs on: one image (the
 * real Runtime Server), 8 Runs a pod unless told, a short termination grace, HOME=/workspace.
 * One copy, so the suites cannot drift in how their Runtimes look.
 */
import type { Runtime, RuntimeSpec } from "@kruntimes/api";

export interface ImageRuntimeOptions {
  replicas: number;
  /** Runs a pod takes (spec.capacity.runs); 8 unless given. */
  runs?: number;
  artifactStore?: RuntimeSpec["artifactStore"];
}

/** Runtime `name` running `image` (e.g. ghcr.io/kruntimes/bash). */
export function imageRuntime(name: string, image: string, o: ImageRuntimeOptions): Runtime {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Runtime",
    metadata: { name },
    spec: {
      replicas: o.replicas,
      capacity: { runs: o.runs ?? 8 },
      template: {
        spec: {
          terminationGracePeriodSeconds: 3,
          containers: [{ name: "runtime", image, env: [{ name: "HOME", value: "/workspace" }] }],
        },
      },
      ...(o.artifactStore ? { artifactStore: o.artifactStore } : {}),
    },
  } as Runtime;
}
