/**
 * What a failed status write means for the writer: the fence did not hold (state moved on:
 * re-decide from newer state), the Run is gone, the request was rejected (a bug or RBAC: back
 * off and log), or the outcome is unknown (network, 5xx, timeout: the write may have landed).
 * Measured on kube-apiserver 1.37: a failed `test` op answers 422 "the server rejected our
 * request due to an error in our request" with empty details.
 */
import { KubeError } from "@kruntimes/kube";

export type WriteFailure = "fenced" | "gone" | "rejected" | "ambiguous";

export function classifyWriteError(e: unknown): WriteFailure {
  if (!(e instanceof KubeError)) return "ambiguous";
  if (e.code === 409) return "fenced";
  // A JSON patch the apiserver could not apply (a `test` op failed, or a path it names is
  // missing) is a 422 with no causes; a status that fails validation is a 422 listing causes.
  if (e.code === 422 && !e.status.details?.causes?.length) return "fenced";
  if (e.code === 404) return "gone";
  if (e.code === 429 || e.code >= 500) return "ambiguous";
  return "rejected";
}
