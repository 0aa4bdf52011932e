/** Maps the outcome of a fenced status write to the reconciler's next step. */

import { classifyWriteError } from "@kruntimes/kube";
import { Result } from "../reconcile/result.ts";

/**
 * A fenced or gone write is done: the state moved on and its informer event brings the key back
 * if anything is left to do. Rejected and ambiguous writes back off and retry.
 */
export function resultOfWriteError(e: unknown): Result {
  const kind = classifyWriteError(e);
  if (kind === "fenced" || kind === "gone") return Result.done();
  return Result.backoff(`${kind}: ${e instanceof Error ? e.message : String(e)}`);
}
