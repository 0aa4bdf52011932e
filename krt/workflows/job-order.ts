/**
 * The order jobs are shown in (describe, logs): by depth in the `needs` DAG — jobs that need
 * nothing first, then the jobs that need only those, and so on — and by name within a depth.
 */

export function jobOrder(jobs: Readonly<Record<string, { needs?: readonly string[] }>>): string[] {
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const depthOf = (job: string): number => {
    const known = depth.get(job);
    if (known !== undefined) return known;
    // A cycle (rejected by validation, but the object may still exist) counts as depth 0.
    if (visiting.has(job) || !(job in jobs)) return 0;
    visiting.add(job);
    const needs = jobs[job]?.needs ?? [];
    const d = needs.length === 0 ? 0 : 1 + Math.max(...needs.map(depthOf));
    visiting.delete(job);
    depth.set(job, d);
    return d;
  };
  return Object.keys(jobs).sort((a, b) => depthOf(a) - depthOf(b) || a.localeCompare(b));
}
