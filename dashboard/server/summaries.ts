/** Kubernetes objects → the summaries list views get (shared/types.ts). Pure; tested beside. */

import type { WorkflowRun } from "@kruntimes/api";
import {
  RUNS_RESOURCE,
  RUNTIME_CONTAINER,
  type Run,
  type Runtime,
  runModeOf,
  runRequests,
  runtimeCapacity,
} from "@kruntimes/api";
import { eventTime, type KubeEvent } from "@kruntimes/kube";
import type {
  EventSummary,
  PodSummary,
  RunSummary,
  RuntimeSummary,
  WorkflowRunSummary,
} from "../shared/types.ts";

export function runSummary(r: Run): RunSummary {
  const s = r.status ?? {};
  const t = s.timing ?? {};
  const out: RunSummary = {
    name: r.metadata.name ?? "",
    namespace: r.metadata.namespace ?? "",
    uid: r.metadata.uid ?? "",
    labels: r.metadata.labels ?? {},
    mode: runModeOf(r.spec),
    runtime: r.spec.runtime,
    phase: s.phase ?? "Pending",
    attempt: s.attempt ?? 0,
    created: r.metadata.creationTimestamp ?? "",
    runsRequest: runRequests(r.spec)[RUNS_RESOURCE] ?? 1,
  };
  if (s.reason) out.reason = s.reason;
  if (s.waitingReason) out.waitingReason = s.waitingReason;
  if (s.exitCode !== undefined) out.exitCode = s.exitCode;
  if (t.createdMicros !== undefined) out.createdMicros = t.createdMicros;
  if (t.finishedMicros !== undefined) out.finishedMicros = t.finishedMicros;
  if (s.assignment?.pod) out.pod = s.assignment.pod;
  if (s.endpoint) out.endpoint = `${s.endpoint.pod}#${s.endpoint.attempt}`;
  return out;
}

export interface KubePod {
  metadata: {
    name?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    creationTimestamp?: string;
  };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}

export function podSummary(p: KubePod, runtimeLabel: string): PodSummary {
  return {
    name: p.metadata.name ?? "",
    runtime: p.metadata.labels?.[runtimeLabel] ?? "",
    phase: p.status?.phase ?? "Unknown",
    ready: p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    ...(p.status?.podIP ? { podIP: p.status.podIP } : {}),
    deleting: Boolean(p.metadata.deletionTimestamp),
    created: p.metadata.creationTimestamp ?? "",
  };
}

export function runtimeSummary(r: Runtime): RuntimeSummary {
  const image = r.spec.template.spec.containers.find((c) => c.name === RUNTIME_CONTAINER)?.image;
  return {
    name: r.metadata.name ?? "",
    namespace: r.metadata.namespace ?? "",
    desired: r.spec.replicas ?? 1,
    ready: r.status?.readyReplicas ?? 0,
    available: r.status?.availableReplicas ?? 0,
    pending: r.status?.pendingRuns ?? 0,
    capacity: runtimeCapacity(r.spec),
    image: typeof image === "string" ? image : "",
    conditions: r.status?.conditions ?? [],
    created: r.metadata.creationTimestamp ?? "",
  };
}

export type { KubeEvent };

export function eventSummary(e: KubeEvent): EventSummary {
  return {
    uid: e.metadata.uid ?? "",
    type: e.type ?? "Normal",
    reason: e.reason ?? "",
    message: e.message ?? "",
    count: e.series?.count ?? e.count ?? 1,
    time: e.series?.lastObservedTime ?? eventTime(e) ?? "",
  };
}

export function workflowRunSummary(w: WorkflowRun): WorkflowRunSummary {
  const jobs: Record<string, number> = {};
  for (const name of Object.keys(w.spec.jobs ?? {})) {
    const phase = w.status?.jobs?.[name]?.phase ?? "Pending";
    jobs[phase] = (jobs[phase] ?? 0) + 1;
  }
  const s = w.status ?? {};
  return {
    name: w.metadata.name ?? "",
    uid: w.metadata.uid ?? "",
    phase: s.phase ?? "Pending",
    ...(s.reason ? { reason: s.reason } : {}),
    jobs,
    created: w.metadata.creationTimestamp ?? "",
    ...(s.startTime ? { startTime: s.startTime } : {}),
    ...(s.completionTime ? { completionTime: s.completionTime } : {}),
  };
}
