/**
 * PreFilter + Filter: every logical resource the Run requests fits. PreFilter rejects requests
 * no pod of the Runtime's current spec could ever hold (a resource it does not offer, or more
 * than a pod has): they wait for the Runtime to change. Filter checks free = capacity − used, and
 * session exclusivity: a session (exclusive request) fits only a pod no Run holds, and a pod a
 * session holds or held (sealed) takes nothing more — it is replaced after the session.
 */
import { Reason } from "@kruntimes/api";
import type { CycleState } from "../../framework/cycle-state.ts";
import type { FilterPlugin, PreFilterPlugin } from "../../framework/plugin.ts";
import { Code, rejected, type Status, type Verdict } from "../../framework/status.ts";
import type { PodView, RunRequest, RuntimeView } from "../../framework/types.ts";

export const NAME = "resources-fit";

/** A session held this pod incarnation: it waits for its replacement, nothing lands there. */
const SEALED = rejected(
  NAME,
  Code.Unschedulable,
  Reason.InsufficientCapacity,
  "pod held by a session (or spent by one)",
);
/** A session takes a pod's whole capacity: only an empty pod fits it. */
const OCCUPIED = rejected(
  NAME,
  Code.Unschedulable,
  Reason.InsufficientCapacity,
  "a session needs an empty pod",
);

export class ResourcesFit implements PreFilterPlugin, FilterPlugin {
  readonly name = NAME;
  /** One status object per resource name, so the per-pod path does not allocate. */
  private readonly insufficient = new Map<string, Status>();

  preFilter(_state: CycleState, run: RunRequest, runtime: RuntimeView): Verdict {
    for (let i = 0; i < run.names.length; i++) {
      const name = run.names[i] as string;
      const amount = run.amounts[i] as number;
      const offered = runtime.capacity[name] ?? 0;
      if (amount > offered) {
        const message =
          offered === 0
            ? `requests ${amount} ${name}; Runtime offers no ${name}`
            : `requests ${amount} ${name}; each pod of the Runtime offers ${offered}`;
        return rejected(NAME, Code.UnschedulableAndUnresolvable, Reason.Unschedulable, message);
      }
    }
    return undefined;
  }

  filter(_state: CycleState, run: RunRequest, pod: PodView): Verdict {
    if (pod.sealed) return SEALED;
    if (run.exclusive && pod.occupied) return OCCUPIED;
    for (let i = 0; i < run.names.length; i++) {
      const name = run.names[i] as string;
      const amount = run.amounts[i] as number;
      if (amount === 0) continue;
      const free = (pod.capacity[name] ?? 0) - (pod.used[name] ?? 0);
      if (free < amount) return this.insufficientFor(name);
    }
    return undefined;
  }

  private insufficientFor(name: string): Status {
    let s = this.insufficient.get(name);
    if (!s) {
      s = rejected(NAME, Code.Unschedulable, Reason.InsufficientCapacity, `insufficient ${name}`);
      this.insufficient.set(name, s);
    }
    return s;
  }
}

export function New(args: unknown): ResourcesFit {
  if (args !== undefined && args !== null && Object.keys(args as object).length > 0) {
    throw new Error(`${NAME} takes no args`);
  }
  return new ResourcesFit();
}
