/**
 * One WorkflowRun, live: its jobs drawn as the `needs` DAG (lib/dag-layout.ts), each job with its
 * phase and its steps, each step with its phase and a link to its child Run.
 */
import type { WorkflowRun } from "@kruntimes/api/src/workflow.ts";
import { ErrorBox } from "../components/error-box.tsx";
import { PhaseBadge } from "../components/phase-badge.tsx";
import { BOX_W, dagLayout } from "../lib/dag-layout.ts";
import { useLiveList } from "../lib/live-list.ts";
import { PHASE_ICON, phaseTone } from "../lib/phases.ts";

export function WorkflowDetail({ ns, name }: { ns: string; name: string }) {
  const api = `/api/namespaces/${encodeURIComponent(ns)}`;
  const live = useLiveList<WorkflowRun>(`${api}/watch/workflowrun?name=${encodeURIComponent(name)}`);
  const back = <a href={`/ns/${encodeURIComponent(ns)}/workflows`}>← WorkflowRuns</a>;
  const wfr = live.items.value[0];
  if (live.error.value)
    return (
      <section>
        {back}
        <ErrorBox error={live.error.value} />
      </section>
    );
  if (!wfr)
    return (
      <section>
        {back}
        <p class="muted">{live.ready.value ? `WorkflowRun ${name} does not exist.` : "Loading…"}</p>
      </section>
    );
  const jobs = wfr.spec.jobs ?? {};
  const status = wfr.status?.jobs ?? {};
  const stepsOf = (job: string) => status[job]?.steps?.length ?? jobs[job]?.steps?.length ?? 1;
  const { boxes, edges, width, height } = dagLayout(jobs, stepsOf);
  return (
    <article aria-labelledby="wfr-h">
      {back}
      <div class="section-head">
        <h1 id="wfr-h">{name}</h1>
        <PhaseBadge phase={wfr.status?.phase ?? "Pending"} />
        {wfr.status?.reason ? <span class="reason">{wfr.status.reason}</span> : null}
      </div>
      {wfr.status?.message ? <p class="message">{wfr.status.message}</p> : null}
      <div class="dag" style={{ width: `${width + 2}px`, height: `${height + 2}px` }} data-testid="dag">
        <svg width={width + 2} height={height + 2} aria-hidden="true">
          {edges.map((e) => (
            <path key={`${e.from}>${e.to}`} d={e.d} class="edge" data-edge={`${e.from}>${e.to}`} />
          ))}
        </svg>
        {boxes.map((b) => {
          const js = status[b.job];
          const steps =
            js?.steps ?? (jobs[b.job]?.steps ?? []).map((s) => ({ name: s.name, phase: "Pending" }));
          return (
            <section
              key={b.job}
              class="job"
              data-job={b.job}
              aria-label={`job ${b.job}`}
              style={{ left: `${b.x}px`, top: `${b.y}px`, width: `${BOX_W}px`, height: `${b.h}px` }}
            >
              <header>
                <b>{b.job}</b> <PhaseBadge phase={js?.phase ?? "Pending"} />
              </header>
              <ol>
                {jobs[b.job]?.uses ? (
                  <li class="muted">
                    uses {jobs[b.job]?.uses}
                    {js?.workflowRun ? (
                      <>
                        {" "}
                        →{" "}
                        <a
                          href={`/ns/${encodeURIComponent(ns)}/workflows/${encodeURIComponent(js.workflowRun)}`}
                        >
                          {js.workflowRun}
                        </a>
                      </>
                    ) : null}
                  </li>
                ) : null}
                {steps.map((s) => {
                  const run = "run" in s ? (s as { run?: string }).run : undefined;
                  return (
                    <li
                      key={s.name}
                      class={`tone-${phaseTone(s.phase)}`}
                      data-step={s.name}
                      data-phase={s.phase}
                    >
                      <span aria-hidden="true">{PHASE_ICON[s.phase as keyof typeof PHASE_ICON] ?? "?"}</span>{" "}
                      {run ? (
                        <a href={`/ns/${encodeURIComponent(ns)}/runs/${encodeURIComponent(run)}`}>{s.name}</a>
                      ) : (
                        s.name
                      )}{" "}
                      <span class="sr-only">{s.phase}</span>
                    </li>
                  );
                })}
              </ol>
            </section>
          );
        })}
      </div>
    </article>
  );
}
