/** What each Runtime pod holds now: the non-terminal Runs assigned to it and the `runs` they take. */
import type { RunSummary } from "../../shared/types.ts";
import { isTerminal } from "./phases.ts";

export interface PodUse {
  used: number;
  runs: RunSummary[];
}

export function podUse(runs: readonly RunSummary[]): Map<string, PodUse> {
  const out = new Map<string, PodUse>();
  for (const r of runs) {
    if (!r.pod || isTerminal(r.phase)) continue;
    const u = out.get(r.pod) ?? { used: 0, runs: [] };
    u.used += r.runsRequest;
    u.runs.push(r);
    out.set(r.pod, u);
  }
  return out;
}
