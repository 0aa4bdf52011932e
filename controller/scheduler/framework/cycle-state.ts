/**
 * Per-cycle scratch space plugins share between their extension points; cleared every cycle.
 * It also carries the placement snapshot (where Runs are placed, by label) the cycle reads.
 */
import { PlacementIndex, type PlacementView } from "../cache/placement-index.ts";
import type { Status } from "./status.ts";

/** Pods (by incarnation, `PodView.domain`) a PreFilter limits the cycle to, and the status of the rest. */
export interface Narrowing {
  readonly domains: { has(domain: string): boolean };
  readonly status: Status;
}

const EMPTY_PLACEMENTS: PlacementView = new PlacementIndex();

export class CycleState {
  private readonly data = new Map<string, unknown>();
  /** Set by PreFilter plugins that know the only pods that can qualify (kube-scheduler's PreFilterResult). */
  readonly narrowings: Narrowing[] = [];

  constructor(readonly placements: PlacementView = EMPTY_PLACEMENTS) {}

  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  write(key: string, value: unknown): void {
    this.data.set(key, value);
  }
  /** Only pods in `domains` can pass; the others are rejected with `status` without running the filters. */
  narrow(domains: Narrowing["domains"], status: Status): void {
    this.narrowings.push({ domains, status });
  }
  clear(): void {
    this.data.clear();
    this.narrowings.length = 0;
  }
}
