/**
 * Where each job of a WorkflowRun goes in the drawing: one column per depth in the `needs` DAG
 * (jobs that need nothing in the first), stacked in krt's job order within a column, each box as
 * tall as its steps need; and one edge per `needs` entry. Pure; tested beside.
 */
import { jobOrder } from "@kruntimes/krt/workflows/job-order.ts";

export interface Box {
  job: string;
  col: number;
  x: number;
  y: number;
  h: number;
}

export interface Edge {
  from: string;
  to: string;
  /** Path from the right edge of `from` to the left edge of `to`. */
  d: string;
}

export const BOX_W = 240;
const GAP_X = 70;
const GAP_Y = 24;
const HEAD_H = 40;
const STEP_H = 24;

export function dagLayout(
  jobs: Readonly<Record<string, { needs?: readonly string[] }>>,
  stepsOf: (job: string) => number,
): { boxes: Box[]; edges: Edge[]; width: number; height: number } {
  const depth = new Map<string, number>();
  const seen = new Set<string>();
  const depthOf = (j: string): number => {
    const known = depth.get(j);
    if (known !== undefined) return known;
    if (seen.has(j) || !(j in jobs)) return 0;
    seen.add(j);
    const needs = (jobs[j]?.needs ?? []).filter((n) => n in jobs);
    const d = needs.length ? 1 + Math.max(...needs.map(depthOf)) : 0;
    depth.set(j, d);
    return d;
  };
  const nextY = new Map<number, number>();
  const boxes: Box[] = [];
  for (const job of jobOrder(jobs)) {
    const col = depthOf(job);
    const y = nextY.get(col) ?? 0;
    const h = HEAD_H + Math.max(1, stepsOf(job)) * STEP_H;
    boxes.push({ job, col, x: col * (BOX_W + GAP_X), y, h });
    nextY.set(col, y + h + GAP_Y);
  }
  const at = new Map(boxes.map((b) => [b.job, b]));
  const edges: Edge[] = [];
  for (const b of boxes)
    for (const need of jobs[b.job]?.needs ?? []) {
      const a = at.get(need);
      if (!a) continue;
      const x1 = a.x + BOX_W;
      const y1 = a.y + HEAD_H / 2;
      const x2 = b.x;
      const y2 = b.y + HEAD_H / 2;
      const mid = (x1 + x2) / 2;
      edges.push({ from: need, to: b.job, d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` });
    }
  const width = Math.max(0, ...boxes.map((b) => b.x + BOX_W));
  const height = Math.max(0, ...boxes.map((b) => b.y + b.h));
  return { boxes, edges, width, height };
}
