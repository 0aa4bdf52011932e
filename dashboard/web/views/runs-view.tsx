/**
 * The Runs table: live (a watch), virtualised (only visible rows exist in the DOM), filtered by
 * phase, mode, runtime (server-side field selector), label selector (server-side) and text,
 * sortable by every column, with counts per phase. Keyboard: `/` filters, ↑/↓ or j/k move,
 * Enter opens. The Functions and Sessions views are this table with the mode fixed.
 */
import type { RunMode, RunPhase } from "@kruntimes/api/src/reasons.ts";
import { useComputed } from "@preact/signals";
import { useEffect, useRef, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import type { RunSummary } from "../../shared/types.ts";
import { ErrorBox } from "../components/error-box.tsx";
import { PhaseBadge } from "../components/phase-badge.tsx";
import { useVirtualizer } from "../components/use-virtualizer.ts";
import { humanAge, humanMicros } from "../lib/format.ts";
import { useLiveList } from "../lib/live-list.ts";
import { PHASE_ICON, RUN_PHASES } from "../lib/phases.ts";
import {
  durationMicros,
  filterQuery,
  filterRuns,
  parseFilter,
  phaseCounts,
  type RunFilter,
  type SortKey,
  serverSelectors,
  sortRuns,
} from "../lib/run-filter.ts";

const ROW = 36;
const COLUMNS: { key: SortKey; label: string }[] = [
  { key: "name", label: "Name" },
  { key: "mode", label: "Mode" },
  { key: "runtime", label: "Runtime" },
  { key: "phase", label: "Phase" },
  { key: "attempt", label: "Attempt" },
  { key: "age", label: "Age" },
  { key: "duration", label: "Duration" },
];

function useNow(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function RunsView({ ns, mode, title }: { ns: string; mode?: RunMode; title: string }) {
  const loc = useLocation();
  const filter = parseFilter(loc.query);
  if (mode) filter.modes = [mode];
  const live = useLiveList<RunSummary>(
    `/api/namespaces/${encodeURIComponent(ns)}/watch/runs${serverSelectors(filter)}`,
  );
  const now = useNow(2000);
  const setFilter = (f: Partial<RunFilter>) => {
    const next = { ...filter, ...f };
    if (mode) next.modes = [];
    loc.route(`${loc.path}${filterQuery(next)}`, true);
  };
  const all = live.items.value;
  const counts = useComputed(() => phaseCounts(live.items.value)).value;
  const noPhase = { ...filter, phases: [] };
  const shown = sortRuns(filterRuns(all, filter), filter.sort, filter.desc, now);
  const inMode = mode ? filterRuns(all, { ...noPhase, text: "" }) : all;
  const modeCounts = mode ? phaseCounts(inMode) : counts;

  const scroller = useRef<HTMLTableSectionElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const v = useVirtualizer(shown.length, () => scroller.current, ROW);
  const [selected, setSelected] = useState(0);
  const open = (r: RunSummary | undefined) =>
    r && loc.route(`/ns/${encodeURIComponent(ns)}/runs/${encodeURIComponent(r.name)}`);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "/" && document.activeElement?.tagName !== "INPUT") {
        e.preventDefault();
        search.current?.focus();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);

  const onTableKey = (e: KeyboardEvent) => {
    const move = (d: number) => {
      e.preventDefault();
      const i = Math.max(0, Math.min(shown.length - 1, selected + d));
      setSelected(i);
      v.scrollToIndex(i);
    };
    if (e.key === "ArrowDown" || e.key === "j") move(1);
    else if (e.key === "ArrowUp" || e.key === "k") move(-1);
    else if (e.key === "PageDown") move(10);
    else if (e.key === "PageUp") move(-10);
    else if (e.key === "Home") move(-shown.length);
    else if (e.key === "End") move(shown.length);
    else if (e.key === "Enter") open(shown[selected]);
  };

  const total = inMode.length;
  return (
    <section class="runs-view" aria-labelledby="runs-h">
      <div class="section-head">
        <h1 id="runs-h">
          {title} <span class="muted">in {ns}</span>
        </h1>
        <span class="muted" data-testid="run-count">
          {shown.length} of {total}
        </span>
      </div>
      <fieldset class="phase-counts" aria-label="Filter by phase">
        {RUN_PHASES.map((p: RunPhase) => {
          const on = filter.phases.includes(p);
          return (
            <button
              key={p}
              type="button"
              class={`chip ${on ? "on" : ""}`}
              aria-pressed={on}
              data-phase-count={p}
              onClick={() =>
                setFilter({ phases: on ? filter.phases.filter((x) => x !== p) : [...filter.phases, p] })
              }
            >
              <span aria-hidden="true">{PHASE_ICON[p]}</span> {p} <b>{modeCounts.get(p) ?? 0}</b>
            </button>
          );
        })}
      </fieldset>
      <div class="filters">
        <input
          ref={search}
          type="search"
          placeholder="Filter by name, runtime, reason, pod  ( / )"
          aria-label="Filter text"
          value={filter.text}
          onInput={(e) => setFilter({ text: e.currentTarget.value })}
        />
        {mode ? null : (
          <select
            aria-label="Mode"
            value={filter.modes[0] ?? ""}
            onChange={(e) =>
              setFilter({ modes: e.currentTarget.value ? [e.currentTarget.value as RunMode] : [] })
            }
          >
            <option value="">all modes</option>
            <option value="task">task</option>
            <option value="function">function</option>
            <option value="session">session</option>
          </select>
        )}
        <input
          type="text"
          placeholder="runtime (server-side)"
          aria-label="Runtime"
          value={filter.runtime}
          onChange={(e) => setFilter({ runtime: e.currentTarget.value.trim() })}
        />
        <input
          type="text"
          placeholder="label selector, e.g. team=a (server-side)"
          aria-label="Label selector"
          value={filter.labels}
          onChange={(e) => setFilter({ labels: e.currentTarget.value.trim() })}
        />
      </div>
      {live.error.value ? <ErrorBox error={live.error.value} /> : null}
      <table class="table" aria-label={title} aria-rowcount={shown.length + 1}>
        <thead>
          <tr class="tr th">
            {COLUMNS.map((c) => (
              <th
                key={c.key}
                scope="col"
                aria-sort={filter.sort === c.key ? (filter.desc ? "descending" : "ascending") : "none"}
              >
                <button
                  type="button"
                  class="sort"
                  onClick={() =>
                    setFilter({ sort: c.key, desc: filter.sort === c.key ? !filter.desc : false })
                  }
                >
                  {c.key === "duration" && mode === "function" ? "Endpoint" : c.label}
                  {filter.sort === c.key ? (filter.desc ? " ▾" : " ▴") : ""}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the rows are navigated with the arrow keys from here */}
        <tbody class="tbody" ref={scroller} tabIndex={0} onKeyDown={onTableKey} data-testid="runs-body">
          <tr class="spacer" style={{ height: `${v.getTotalSize()}px` }} />
          {v.getVirtualItems().map((item) => {
            const r = shown[item.index] as RunSummary;
            const d = durationMicros(r, now);
            return (
              <tr
                key={r.uid}
                class={`tr ${item.index === selected ? "selected" : ""}`}
                aria-rowindex={item.index + 2}
                aria-selected={item.index === selected}
                data-run={r.name}
                style={{ transform: `translateY(${item.start}px)`, height: `${ROW}px` }}
                onClick={() => {
                  setSelected(item.index);
                  open(r);
                }}
              >
                <td class="name">
                  <a href={`/ns/${encodeURIComponent(ns)}/runs/${encodeURIComponent(r.name)}`} tabIndex={-1}>
                    {r.name}
                  </a>
                </td>
                <td>{r.mode}</td>
                <td>{r.runtime}</td>
                <td title={r.reason ?? r.waitingReason ?? ""}>
                  <PhaseBadge phase={r.phase} />
                </td>
                <td>{r.attempt || ""}</td>
                <td>{humanAge(r.created, now)}</td>
                <td>{mode === "function" ? (r.endpoint ?? "") : d !== undefined ? humanMicros(d) : ""}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {live.ready.value && shown.length === 0 && !live.error.value ? (
        <p class="muted empty">No Runs {total ? "match the filters" : "in this namespace"}.</p>
      ) : null}
      {!live.ready.value ? <p class="muted empty">Loading…</p> : null}
    </section>
  );
}
