/**
 * The Runs table's filters, sorting and counts — pure functions over summaries, tested beside.
 * Runtime and label selector are server-side (field and label selectors on the watch); phase,
 * mode and text are applied here so the per-phase counts stay visible while one phase is shown.
 * Every filter lives in the URL's query, so a filtered view is a link.
 */
import type { RunMode, RunPhase } from "@kruntimes/api/src/reasons.ts";
import type { RunSummary } from "../../shared/types.ts";
import { isTerminal, RUN_PHASES } from "./phases.ts";

export const SORT_KEYS = ["name", "mode", "runtime", "phase", "attempt", "age", "duration"] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export interface RunFilter {
  phases: RunPhase[];
  modes: RunMode[];
  text: string;
  runtime: string;
  labels: string;
  sort: SortKey;
  desc: boolean;
}

export const DEFAULT_FILTER: RunFilter = {
  phases: [],
  modes: [],
  text: "",
  runtime: "",
  labels: "",
  sort: "age",
  desc: false,
};

const list = (v: string | undefined) => (v ? v.split(",").filter(Boolean) : []);

export function parseFilter(q: Record<string, string | undefined>): RunFilter {
  const sort = (SORT_KEYS as readonly string[]).includes(q.sort ?? "")
    ? (q.sort as SortKey)
    : DEFAULT_FILTER.sort;
  return {
    phases: list(q.phase).filter((p) => (RUN_PHASES as string[]).includes(p)) as RunPhase[],
    modes: list(q.mode).filter((m) => ["task", "function", "session"].includes(m)) as RunMode[],
    text: q.q ?? "",
    runtime: q.runtime ?? "",
    labels: q.labels ?? "",
    sort,
    desc: q.desc === "1",
  };
}

export function filterQuery(f: RunFilter): string {
  const q = new URLSearchParams();
  if (f.phases.length) q.set("phase", f.phases.join(","));
  if (f.modes.length) q.set("mode", f.modes.join(","));
  if (f.text) q.set("q", f.text);
  if (f.runtime) q.set("runtime", f.runtime);
  if (f.labels) q.set("labels", f.labels);
  if (f.sort !== DEFAULT_FILTER.sort) q.set("sort", f.sort);
  if (f.desc) q.set("desc", "1");
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The watch's server-side selectors: runtime is a selectable field of Runs (spec.runtime). */
export function serverSelectors(f: Pick<RunFilter, "runtime" | "labels">): string {
  const q = new URLSearchParams();
  if (f.runtime) q.set("fieldSelector", `spec.runtime=${f.runtime}`);
  if (f.labels) q.set("labelSelector", f.labels);
  const s = q.toString();
  return s ? `?${s}` : "";
}

function matchesText(r: RunSummary, text: string): boolean {
  if (!text) return true;
  const t = text.toLowerCase();
  return (
    r.name.toLowerCase().includes(t) ||
    r.runtime.toLowerCase().includes(t) ||
    (r.reason ?? "").toLowerCase().includes(t) ||
    (r.pod ?? "").toLowerCase().includes(t)
  );
}

export function filterRuns(runs: readonly RunSummary[], f: RunFilter): RunSummary[] {
  return runs.filter(
    (r) =>
      (f.phases.length === 0 || f.phases.includes(r.phase)) &&
      (f.modes.length === 0 || f.modes.includes(r.mode)) &&
      matchesText(r, f.text),
  );
}

/** Created → finished in µs; for a Run still going, created → now. Undefined when unknown. */
export function durationMicros(r: RunSummary, nowMs: number): number | undefined {
  const created = r.createdMicros ?? (r.created ? Date.parse(r.created) * 1000 : undefined);
  if (created === undefined || Number.isNaN(created)) return undefined;
  if (r.finishedMicros !== undefined) return r.finishedMicros - created;
  if (isTerminal(r.phase)) return undefined;
  return Math.max(0, nowMs * 1000 - created);
}

const PHASE_ORDER = new Map(RUN_PHASES.map((p, i) => [p, i]));

export function sortRuns(runs: RunSummary[], key: SortKey, desc: boolean, nowMs: number): RunSummary[] {
  const val = (r: RunSummary): string | number => {
    switch (key) {
      case "name":
        return r.name;
      case "mode":
        return r.mode;
      case "runtime":
        return r.runtime;
      case "phase":
        return PHASE_ORDER.get(r.phase) ?? 99;
      case "attempt":
        return r.attempt;
      case "age":
        // Youngest first by default: the newest creation time sorts first.
        return -(r.createdMicros ?? Date.parse(r.created) * 1000);
      case "duration":
        return durationMicros(r, nowMs) ?? -1;
    }
  };
  const sign = desc ? -1 : 1;
  return [...runs].sort((a, b) => {
    const x = val(a);
    const y = val(b);
    const c = x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    return c * sign;
  });
}

export function phaseCounts(runs: readonly RunSummary[]): Map<RunPhase, number> {
  const counts = new Map<RunPhase, number>();
  for (const r of runs) counts.set(r.phase, (counts.get(r.phase) ?? 0) + 1);
  return counts;
}
