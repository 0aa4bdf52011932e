/**
 * Per-cycle scratch space plugins share between their extension points; cleared every cycle.
 * It also carries the placement snapshot (where Runs are placed, by label) the cycle reads.
 */
import { PlacementIndex, type PlacementView } from "../cache/placement-index.ts";

const EMPTY_PLACEMENTS: PlacementView = new PlacementIndex();

export class CycleState {
  private readonly data = new Map<string, unknown>();

  constructor(readonly placements: PlacementView = EMPTY_PLACEMENTS) {}

  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }
  write(key: string, value: unknown): void {
    this.data.set(key, value);
  }
  clear(): void {
    this.data.clear();
  }
}
