/**
 * The status writes runtimed makes, as pure functions of the Run it observed. Every write is one
 * JSON patch fenced on `assignment.podUID` + `attempt`: `test` ops first, so a pod that lost the
 * Run (recovered, re-placed, retried elsewhere) can never overwrite a newer attempt. Every write
 * also tests the phase it was decided on: the Running write `phase == Scheduled`, so when it is
 * slower than the terminal write it fails instead of undoing it; terminal and retry writes the
 * phase last seen, so a Run the controller ended meanwhile stays ended. Terminal and retry writes
 * replace `/status` whole: one request.
 */
import { type Condition, type Reason, type Run, RunPhase, type RunStatus } from "@kruntimes/api";
import { kubeTime } from "../clock.ts";
import type { Outcome } from "./outcome.ts";
import { boundMessage, type Tail } from "./tails.ts";

export type JsonPatchOp =
  | { op: "test"; path: string; value: unknown }
  | { op: "add" | "replace"; path: string; value: unknown };

/** The condition type runtimed sets when a Run ends: True, with the Run's reason. */
export const FINISHED_CONDITION = "Finished";

export function fenceOps(podUID: string, attempt: number): JsonPatchOp[] {
  return [
    { op: "test", path: "/status/assignment/podUID", value: podUID },
    { op: "test", path: "/status/attempt", value: attempt },
  ];
}

/** Scheduled → Running with the server's start time; fails harmlessly once the Run has moved on. */
export function runningPatch(podUID: string, attempt: number, startedMicros: number): JsonPatchOp[] {
  return [
    ...fenceOps(podUID, attempt),
    { op: "test", path: "/status/phase", value: RunPhase.Scheduled },
    { op: "replace", path: "/status/phase", value: RunPhase.Running },
    { op: "add", path: "/status/timing/startedMicros", value: startedMicros },
  ];
}

/**
 * Replaces `/status` whole, fenced on pod UID + attempt and on `phase`, the phase the writer
 * observed when it decided (absent: no phase yet).
 */
export function fencedStatusPatch(
  podUID: string,
  attempt: number,
  phase: string | undefined,
  status: RunStatus,
): JsonPatchOp[] {
  return [
    ...fenceOps(podUID, attempt),
    { op: "test", path: "/status/phase", value: phase ?? null },
    { op: "add", path: "/status", value: status },
  ];
}

export interface AttemptResult {
  outcome: Outcome;
  exitCode?: number;
  signal?: string;
  outputs?: Record<string, string>;
  stdout?: Tail;
  stderr?: Tail;
  /** From the server's TaskStarted; absent when the attempt never started. */
  startedMicros?: number;
  finishedMicros: number;
}

export function setCondition(
  list: readonly Condition[] | undefined,
  c: Omit<Condition, "lastTransitionTime">,
  nowMs: number,
) {
  const prev = list?.find((x) => x.type === c.type);
  const next: Condition = {
    ...c,
    message: boundMessage(c.message),
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : kubeTime(nowMs),
  };
  return [...(list ?? []).filter((x) => x.type !== c.type), next];
}

/** What every write keeps: the assignment, the attempt, creation/scheduling times, artifacts. */
export function carried(run: Run): RunStatus {
  const s = run.status ?? {};
  const out: RunStatus = {};
  if (run.metadata.generation !== undefined) out.observedGeneration = run.metadata.generation;
  if (s.attempt !== undefined) out.attempt = s.attempt;
  if (s.assignment) out.assignment = s.assignment;
  if (s.artifactRefs?.length) out.artifactRefs = s.artifactRefs;
  return out;
}

export function baseTiming(run: Run) {
  const t = run.status?.timing ?? {};
  return {
    ...(t.createdMicros !== undefined ? { createdMicros: t.createdMicros } : {}),
    ...(t.scheduledMicros !== undefined ? { scheduledMicros: t.scheduledMicros } : {}),
  };
}

const SIGNAL = /^SIG[A-Z0-9]{1,13}$/;

/** The terminal status of the current attempt. */
export function terminalStatus(run: Run, r: AttemptResult, reportedMicros: number, nowMs: number): RunStatus {
  const s: RunStatus = {
    ...carried(run),
    phase: r.outcome.phase,
    reason: r.outcome.reason,
    message: boundMessage(r.outcome.message),
    timing: {
      ...baseTiming(run),
      ...(r.startedMicros ? { startedMicros: r.startedMicros } : {}),
      finishedMicros: r.finishedMicros,
      reportedMicros,
    },
    conditions: setCondition(
      run.status?.conditions,
      {
        type: FINISHED_CONDITION,
        status: "True",
        reason: r.outcome.reason,
        message: r.outcome.message,
        ...(run.metadata.generation !== undefined ? { observedGeneration: run.metadata.generation } : {}),
      },
      nowMs,
    ),
  };
  if (r.exitCode !== undefined && r.exitCode >= 0 && r.exitCode <= 255) s.exitCode = r.exitCode;
  if (r.signal && SIGNAL.test(r.signal)) s.signal = r.signal;
  if (r.outputs && Object.keys(r.outputs).length > 0) s.outputs = r.outputs;
  if (r.stdout?.text || r.stdout?.truncated) {
    s.stdoutTail = r.stdout.text;
    s.stdoutTruncated = r.stdout.truncated;
  }
  if (r.stderr?.text || r.stderr?.truncated) {
    s.stderrTail = r.stderr.text;
    s.stderrTruncated = r.stderr.truncated;
  }
  return s;
}

/**
 * The next attempt, in place on the same pod: `attempt` and `assignment.attempt` bumped together,
 * phase back to Scheduled with `scheduledMicros` = when the attempt is due (after the backoff),
 * the failure that caused it in `reason`/`message`. Scheduled keeps the capacity held and lets a
 * restarted runtimed start the attempt when it is due.
 */
export function retryStatus(
  run: Run,
  failed: Outcome,
  failedAttempt: number,
  dueMicros: number,
  delayMs: number,
  nowMs: number,
): RunStatus {
  const a = run.status?.assignment;
  if (!a) throw new Error(`run ${run.metadata.name} has no assignment to retry on`);
  const next = failedAttempt + 1;
  const message = `attempt ${failedAttempt} ended ${failed.reason}: ${failed.message}; attempt ${next} starts on pod ${a.pod} in ${(delayMs / 1000).toFixed(1)}s`;
  return {
    ...carried(run),
    phase: RunPhase.Scheduled,
    attempt: next,
    assignment: { ...a, attempt: next },
    reason: failed.reason as Reason,
    message: boundMessage(message),
    timing: { ...baseTiming(run), scheduledMicros: dueMicros },
    conditions: setCondition(
      run.status?.conditions?.filter((c) => c.type !== FINISHED_CONDITION),
      {
        type: "Scheduled",
        status: "True",
        reason: "Scheduled",
        message: `attempt ${next} retried in place on pod ${a.pod}`,
      },
      nowMs,
    ),
  };
}
