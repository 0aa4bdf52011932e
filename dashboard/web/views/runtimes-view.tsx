/**
 * Runtimes: desired vs ready pods, and per pod its capacity and what it holds now (a bar), with
 * the Runs on it. Three live lists (Runtimes, their pods, Runs); use is computed from the Runs'
 * assignments, the way the scheduler counts it.
 */
import type { PodSummary, RunSummary, RuntimeSummary } from "../../shared/types.ts";
import { ErrorBox } from "../components/error-box.tsx";
import { PhaseBadge } from "../components/phase-badge.tsx";
import { useLiveList } from "../lib/live-list.ts";
import { podUse } from "../lib/pod-use.ts";

export function RuntimesView({ ns }: { ns: string }) {
  const api = `/api/namespaces/${encodeURIComponent(ns)}/watch`;
  const runtimes = useLiveList<RuntimeSummary>(`${api}/runtimes`);
  const pods = useLiveList<PodSummary>(`${api}/pods`);
  const runs = useLiveList<RunSummary>(`${api}/runs`);
  const use = podUse(runs.items.value);
  const list = [...runtimes.items.value].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <section aria-labelledby="rt-h">
      <div class="section-head">
        <h1 id="rt-h">
          Runtimes <span class="muted">in {ns}</span>
        </h1>
      </div>
      {runtimes.error.value ? <ErrorBox error={runtimes.error.value} /> : null}
      {pods.error.value ? <ErrorBox error={pods.error.value} /> : null}
      {runtimes.ready.value && list.length === 0 && !runtimes.error.value ? (
        <p class="muted">No Runtimes in this namespace.</p>
      ) : null}
      {list.map((rt) => {
        const cap = rt.capacity.runs ?? 0;
        const rtPods = pods.items.value
          .filter((p) => p.runtime === rt.name)
          .sort((a, b) => a.name.localeCompare(b.name));
        const ok = rt.ready >= rt.desired;
        return (
          <article key={rt.name} class="runtime card" data-runtime={rt.name}>
            <header class="section-head">
              <h2>{rt.name}</h2>
              <span class={`phase tone-${ok ? "ok" : "waiting"}`} data-testid="replicas">
                <span aria-hidden="true">{ok ? "✓" : "◷"}</span> {rt.ready}/{rt.desired} ready
              </span>
              <span class="muted">
                {rt.available} available · <span data-testid="pending">{rt.pending} Runs waiting</span> ·
                capacity{" "}
                {Object.entries(rt.capacity)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(", ")}{" "}
                per pod · {rt.image}
              </span>
            </header>
            {rtPods.length === 0 ? <p class="muted">no pods</p> : null}
            <ul class="pods">
              {rtPods.map((p) => {
                const u = use.get(p.name);
                const used = u?.used ?? 0;
                const pct = cap ? Math.min(100, Math.round((used / cap) * 100)) : 0;
                return (
                  <li key={p.name} data-pod={p.name}>
                    <div class="pod-line">
                      <span class="pod-name">
                        {p.ready ? "●" : "○"} {p.name}
                        {p.deleting ? " (terminating)" : ""}
                      </span>
                      <meter
                        class={`bar ${pct >= 100 ? "full" : ""}`}
                        min={0}
                        max={cap || 1}
                        value={used}
                        aria-label={`${p.name}: ${used} of ${cap} runs in use`}
                        data-pct={pct}
                      />
                      <span class="muted">
                        {used}/{cap} runs
                      </span>
                    </div>
                    {u?.runs.length ? (
                      <ul class="pod-runs">
                        {u.runs.map((r) => (
                          <li key={r.uid}>
                            <a href={`/ns/${encodeURIComponent(ns)}/runs/${encodeURIComponent(r.name)}`}>
                              {r.name}
                            </a>{" "}
                            <PhaseBadge phase={r.phase} />
                          </li>
                        ))}
                      </ul>
                    ) : null}
                  </li>
                );
              })}
            </ul>
          </article>
        );
      })}
    </section>
  );
}
