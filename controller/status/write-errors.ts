/**
 * What a failed status write means for the writer: the fence did not hold (state moved on:
 * re-decide from newer state), the Run is gone, the request was rejected (a bug or RBAC: back
 * off and log), or the outcome is unknown (network, 5xx, timeout: the write may have landed).
 */
import { KubeError } from "@kruntimes/kube";

export type WriteFailure = "fenced" | "gone" | "rejected" | "ambiguous";

export function classifyWriteError(e: unknown): WriteFailure {
  if (!(e instanceof KubeError)) return "ambiguous";
  if (e.code === 409) return "fenced";
  if (e.code === 422 && /test operation|testing value/i.test(e.message)) return "fenced";
  if (e.code === 404) return "gone";
  if (e.code === 429 || e.code >= 500) return "ambiguous";
  return "rejected";
}
