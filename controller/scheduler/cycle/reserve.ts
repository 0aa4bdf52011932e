/** The Reserve extension point: every Reserve plugin in order; a refusal undoes the earlier ones. */
import type { CycleState } from "../framework/cycle-state.ts";
import type { Framework } from "../framework/registry.ts";
import type { Status } from "../framework/status.ts";
import type { PodView, RunRequest } from "../framework/types.ts";

export function reserveAll(
  fw: Framework,
  state: CycleState,
  run: RunRequest,
  pod: PodView,
): Status | undefined {
  for (let i = 0; i < fw.reserve.length; i++) {
    const s = fw.reserve[i]?.reserve(state, run, pod);
    if (s) {
      for (let j = i - 1; j >= 0; j--) fw.reserve[j]?.unreserve(run, pod);
      return s;
    }
  }
  return undefined;
}

export function unreserveAll(fw: Framework, run: RunRequest, pod: PodView): void {
  for (let i = fw.reserve.length - 1; i >= 0; i--) fw.reserve[i]?.unreserve(run, pod);
}
