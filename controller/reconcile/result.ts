/**
 * What a reconcile tells its work queue to do next, in controller-runtime's terms: nothing
 * (`done`), look again after a delay (`requeueAfter`), or retry with per-key exponential backoff
 * (`backoff`, also what a thrown error means).
 */
export type Result =
  | { readonly kind: "done" }
  | { readonly kind: "requeueAfter"; readonly ms: number }
  | { readonly kind: "backoff"; readonly reason: string };

const DONE: Result = { kind: "done" };

export const Result = {
  done: (): Result => DONE,
  requeueAfter: (ms: number): Result => ({ kind: "requeueAfter", ms: Math.max(0, ms) }),
  backoff: (reason: string): Result => ({ kind: "backoff", reason }),
};

/** The earlier of two optional requeue delays (undefined = none). */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
