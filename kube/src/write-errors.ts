/**
 * What a failed write means for a fenced writer (the controller's binds and recovery, runtimed's
 * status): the fence did not hold (state moved on: re-decide from newer state), the object is
 * gone, the request was rejected (a bug or RBAC: back off and log), or the outcome is unknown
 * (network, 5xx, throttling: the write may have landed). Measured on kube-apiserver 1.37: a
 * failed JSON-patch `test` op answers 422 with no causes; a status that fails validation is a 422
 * listing its causes.
 */
import { KubeError } from "./errors.ts";

export type WriteFailure = "fenced" | "gone" | "rejected" | "ambiguous";

export function classifyWriteError(e: unknown): WriteFailure {
  if (!(e instanceof KubeError)) return "ambiguous";
  if (e.code === 409) return "fenced";
  if (e.code === 422 && !e.status.details?.causes?.length) return "fenced";
  if (e.code === 404) return "gone";
  if (e.code === 429 || e.code >= 500) return "ambiguous";
  return "rejected";
}
