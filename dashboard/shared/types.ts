/**
 * The shapes the backend sends the browser. List views get summaries (a Run's list row is a few
 * hundred bytes; the whole object can carry 32 KiB of output tails), detail views the object.
 */
import type { RunMode, RunPhase } from "@kruntimes/api/src/reasons.ts";
import type { Condition } from "@kruntimes/api/src/schema/common.ts";

export interface RunSummary {
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  mode: RunMode;
  runtime: string;
  phase: RunPhase;
  reason?: string;
  waitingReason?: string;
  attempt: number;
  exitCode?: number;
  /** RFC 3339 creationTimestamp. */
  created: string;
  /** µs since the epoch (status.timing), when known. */
  createdMicros?: number;
  finishedMicros?: number;
  pod?: string;
  /** The `runs` resource it takes on its pod (spec.resources.requests.runs, default 1). */
  runsRequest: number;
  /** A function or session Run serving through the gateway. */
  endpoint?: string;
}

export interface PodSummary {
  name: string;
  runtime: string;
  phase: string;
  ready: boolean;
  podIP?: string;
  deleting: boolean;
  created: string;
}

export interface RuntimeSummary {
  name: string;
  namespace: string;
  desired: number;
  ready: number;
  available: number;
  /** Runs waiting for a pod of this Runtime (status.pendingRuns). */
  pending: number;
  capacity: Record<string, number>;
  image: string;
  conditions: Condition[];
  created: string;
}

export interface EventSummary {
  uid: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  time: string;
}

export interface WorkflowRunSummary {
  name: string;
  uid: string;
  phase: string;
  reason?: string;
  /** Jobs per phase, e.g. { Succeeded: 2, Running: 1 }. */
  jobs: Record<string, number>;
  created: string;
  startTime?: string;
  completionTime?: string;
}

/** What `GET /api/session` answers. */
export interface SessionInfo {
  mode: "token" | "kubeconfig";
  user?: string;
  groups?: string[];
  gatewayNamespace: string;
}

/** What `GET /api/namespaces` answers. */
export interface NamespaceList {
  /** Namespaces in which the caller may list Runs. */
  items: string[];
  /** Listing namespaces is forbidden: the user types one in. */
  listForbidden: boolean;
}

export interface ApiError {
  status: number;
  reason: string;
  message: string;
  next?: string;
}

/** The kinds `GET /api/namespaces/:ns/watch/:kind` streams. */
export const WATCH_KINDS = [
  "runs",
  "runtimes",
  "pods",
  "events",
  "run",
  "workflowruns",
  "workflowrun",
] as const;
export type WatchKind = (typeof WATCH_KINDS)[number];
