/**
 * JSON-patch fences for Run status writes. Every controller write of a Run's status tests the
 * state it was decided on — `phase` and `attempt` (and the assigned pod UID where there is one) —
 * and then replaces `/status` whole. The apiserver applies the patch inside its optimistic-
 * concurrency loop, re-evaluating the tests against the stored object on every retry, so a write
 * decided on stale state fails (422) instead of overwriting a newer one.
 */
import type { RunStatus } from "@kruntimes/api";

export type JsonPatchOp =
  | { op: "test"; path: string; value: unknown }
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/** Tests that hold exactly when the stored status is what `status` says (phase and attempt). */
export function fenceOps(status: RunStatus | undefined): JsonPatchOp[] {
  if (!status) return [{ op: "test", path: "/status", value: null }];
  return [
    { op: "test", path: "/status/phase", value: status.phase ?? null },
    { op: "test", path: "/status/attempt", value: status.attempt ?? null },
  ];
}

/** Also fences on the assigned pod UID (writes about an assignment). */
export function assignmentFenceOps(status: RunStatus): JsonPatchOp[] {
  return [
    ...fenceOps(status),
    { op: "test", path: "/status/assignment/podUID", value: status.assignment?.podUID ?? null },
  ];
}

export function replaceStatus(fence: JsonPatchOp[], next: RunStatus): JsonPatchOp[] {
  return [...fence, { op: "add", path: "/status", value: next }];
}
