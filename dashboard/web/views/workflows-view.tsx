/** WorkflowRuns in a namespace, live: phase, jobs per phase, age and duration. */
import type { WorkflowRunSummary } from "../../shared/types.ts";
import { ErrorBox } from "../components/error-box.tsx";
import { PhaseBadge } from "../components/phase-badge.tsx";
import { humanAge, humanDuration } from "../lib/format.ts";
import { useLiveList } from "../lib/live-list.ts";

export function WorkflowsView({ ns }: { ns: string }) {
  const live = useLiveList<WorkflowRunSummary>(
    `/api/namespaces/${encodeURIComponent(ns)}/watch/workflowruns`,
  );
  const now = Date.now();
  const runs = [...live.items.value].sort((a, b) =>
    a.created < b.created ? 1 : a.created > b.created ? -1 : 0,
  );
  return (
    <section aria-labelledby="wf-h">
      <div class="section-head">
        <h1 id="wf-h">
          WorkflowRuns <span class="muted">in {ns}</span>
        </h1>
      </div>
      {live.error.value ? <ErrorBox error={live.error.value} /> : null}
      {live.ready.value && runs.length === 0 && !live.error.value ? (
        <p class="muted">No WorkflowRuns in this namespace.</p>
      ) : null}
      <table class="plain">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Phase</th>
            <th scope="col">Jobs</th>
            <th scope="col">Age</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((w) => (
            <tr key={w.uid} data-workflowrun={w.name}>
              <td>
                <a href={`/ns/${encodeURIComponent(ns)}/workflows/${encodeURIComponent(w.name)}`}>{w.name}</a>
              </td>
              <td title={w.reason ?? ""}>
                <PhaseBadge phase={w.phase} />
              </td>
              <td>
                {Object.entries(w.jobs)
                  .map(([p, n]) => `${n} ${p}`)
                  .join(", ")}
              </td>
              <td>{humanAge(w.created, now)}</td>
              <td>
                {w.startTime
                  ? humanDuration(
                      (w.completionTime ? Date.parse(w.completionTime) : now) - Date.parse(w.startTime),
                    )
                  : ""}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
