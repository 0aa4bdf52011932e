/** `Run`: one execution request placed onto a warm pod of a Runtime. */
import { type API_VERSION, DEFAULT_RUN_REQUEST, type RUN_KIND, RUNS_RESOURCE } from "./constants.ts";
import { RunMode } from "./reasons.ts";
import type { RunSpec } from "./run-spec.ts";
import type { RunStatus } from "./run-status.ts";
import type { ObjectMeta } from "./schema/meta.ts";

export interface Run {
  apiVersion: typeof API_VERSION;
  kind: typeof RUN_KIND;
  metadata: ObjectMeta;
  spec: RunSpec;
  status?: RunStatus;
}

/** Which of `spec.mode.task | function | session` is set (validation guarantees exactly one). */
export function runModeOf(spec: Pick<RunSpec, "mode">): RunMode {
  if (spec.mode.function) return RunMode.Function;
  if (spec.mode.session) return RunMode.Session;
  return RunMode.Task;
}

/** `spec.resources.requests` with the API's default applied: `runs` is 1 unless given. */
export function runRequests(spec: Pick<RunSpec, "resources">): Record<string, number> {
  return { [RUNS_RESOURCE]: DEFAULT_RUN_REQUEST, ...spec.resources?.requests };
}
