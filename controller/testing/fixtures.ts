/** Fixture builders for unit tests and the benchmark: Runs, Runtimes, Runtime Pods, Leases, render options. */
import {
  API_VERSION,
  Labels,
  MANAGED_BY,
  RUN_KIND,
  RUNTIME_KIND,
  type Run,
  type RunStatus,
  type Runtime,
} from "@kruntimes/api";
import { type Lease, microTime, type Pod } from "../kube-types.ts";
import type { RenderOptions } from "../runtime/render/render-options.ts";
import { CAPACITY_ANNOTATION } from "../scheduler/cache/pod-info.ts";

export interface RunFixture {
  name: string;
  namespace?: string;
  runtime?: string;
  requests?: Record<string, number>;
  mode?: "task" | "function" | "session";
  status?: RunStatus;
  termination?: "Immediate";
  ttl?: number;
  retry?: Run["spec"]["retryPolicy"];
  rv?: string;
  labels?: Record<string, string>;
  affinity?: Run["spec"]["affinity"];
  priority?: number;
  /** `metadata.creationTimestamp` as epoch ms. */
  createdMs?: number;
}

export function aRun(f: RunFixture): Run {
  const mode =
    f.mode === "function"
      ? { function: { handler: "handler" } }
      : f.mode === "session"
        ? { session: {} }
        : { task: { args: ["true"] } };
  return {
    apiVersion: API_VERSION,
    kind: RUN_KIND,
    metadata: {
      name: f.name,
      namespace: f.namespace ?? "ns",
      uid: `uid-${f.name}`,
      resourceVersion: f.rv ?? "1",
      generation: 1,
      ...(f.labels ? { labels: f.labels } : {}),
      ...(f.createdMs !== undefined ? { creationTimestamp: new Date(f.createdMs).toISOString() } : {}),
    },
    spec: {
      runtime: f.runtime ?? "rt",
      mode,
      ...(f.mode === "function" ? { source: { inline: "export function handler() {}" } } : {}),
      ...(f.requests ? { resources: { requests: f.requests } } : {}),
      ...(f.termination ? { termination: { mode: f.termination } } : {}),
      ...(f.ttl !== undefined ? { ttlSecondsAfterFinished: f.ttl } : {}),
      ...(f.retry ? { retryPolicy: f.retry } : {}),
      ...(f.affinity ? { affinity: f.affinity } : {}),
      ...(f.priority !== undefined ? { priority: f.priority } : {}),
    },
    ...(f.status ? { status: f.status } : {}),
  } as Run;
}

export function aRuntime(
  name: string,
  capacity: Record<string, number> = { runs: 8 },
  namespace = "ns",
): Runtime {
  return {
    apiVersion: API_VERSION,
    kind: RUNTIME_KIND,
    metadata: { name, namespace, uid: `uid-rt-${name}`, generation: 1 },
    spec: {
      replicas: 1,
      capacity,
      template: { spec: { containers: [{ name: "runtime", image: "ghcr.io/kruntimes/bash" }] } },
    },
  } as Runtime;
}

export interface PodFixture {
  name: string;
  namespace?: string;
  runtime?: string;
  uid?: string;
  ready?: boolean;
  terminating?: boolean;
  capacity?: Record<string, number> | null;
  node?: string;
  /** More pod annotations (e.g. the autoscaler's drain mark). */
  annotations?: Record<string, string>;
}

export function aPod(f: PodFixture): Pod {
  const capacity = f.capacity === undefined ? { runs: 8 } : f.capacity;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: f.name,
      namespace: f.namespace ?? "ns",
      uid: f.uid ?? `uid-${f.name}`,
      labels: { [Labels.runtime]: f.runtime ?? "rt", [Labels.managedBy]: MANAGED_BY },
      annotations: {
        ...(capacity ? { [CAPACITY_ANNOTATION]: JSON.stringify(capacity) } : {}),
        ...f.annotations,
      },
      ...(f.terminating ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    spec: { nodeName: f.node ?? "node-1" },
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: f.ready === false ? "False" : "True" }],
    },
  };
}

export function aLease(pod: string, holder: string, renewMs: number, namespace = "ns", seconds = 10): Lease {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: pod, namespace, labels: { [Labels.runtime]: "rt" } },
    spec: { holderIdentity: holder, leaseDurationSeconds: seconds, renewTime: microTime(renewMs) },
  };
}

/** The status of a Run bound to `pod` (for accounting tests). */
export function boundTo(pod: string, attempt = 1, phase: RunStatus["phase"] = "Scheduled"): RunStatus {
  return { phase, attempt, assignment: { pod, podUID: `uid-${pod}`, attempt } };
}

/** The controller's render options as the render tests use them; `o` overrides single fields. */
export function renderOptions(o: Partial<RenderOptions> = {}): RenderOptions {
  return {
    runtimedImage: "ghcr.io/kruntimes/runtimed:0.1.0",
    runtimedPort: 8081,
    leaseDurationSeconds: 10,
    heartbeatIntervalMs: 2000,
    runtimedResources: {},
    runtimeResources: {},
    warmPoolMax: 8,
    dataplanePort: 8444,
    dataplaneSubjects: ["system:serviceaccount:kruntimes:kruntimes-gateway"],
    dataplaneNetworkPolicy: false,
    gatewayPodLabels: { "app.kubernetes.io/name": "kruntimes-gateway" },
    ...o,
  };
}
