/**
 * One Run, live: status and reason, the phase timeline and conditions, the latency breakdown
 * chart, outputs, output tails, artifacts (downloaded through the maintainer with the caller's
 * token), events, logs (tail and follow per attempt), the spec as YAML; the invoke box for a
 * function and the audit records for a session.
 */

import type { RunPhase } from "@kruntimes/api/src/reasons.ts";
import type { Run } from "@kruntimes/api/src/run.ts";
import { useState } from "preact/hooks";
import type { EventSummary } from "../../shared/types.ts";
import { ErrorBox } from "../components/error-box.tsx";
import { InvokeBox } from "../components/invoke-box.tsx";
import { LogView, useRunLogs } from "../components/log-view.tsx";
import { PhaseBadge } from "../components/phase-badge.tsx";
import { TimingChart } from "../components/timing-chart.tsx";
import { YamlView } from "../components/yaml-view.tsx";
import { download, type RequestFailed } from "../lib/api.ts";
import { humanAge, stamp } from "../lib/format.ts";
import { useLiveList } from "../lib/live-list.ts";
import { breakdown, timeline } from "../lib/timing.ts";

function modeOf(r: Run): "task" | "function" | "session" {
  return r.spec.mode.function ? "function" : r.spec.mode.session ? "session" : "task";
}

function Kv({ rows }: { rows: [string, unknown][] }) {
  return (
    <table class="kv">
      <tbody>
        {rows
          .filter(([, v]) => v !== undefined && v !== "" && v !== null)
          .map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td data-field={k}>{String(v)}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

function Audit({ base }: { base: string }) {
  const { lines } = useRunLogs(`${base}/logs?follow=1`);
  const audit = lines.filter((l) => l.text.startsWith("audit: ")).slice(-20);
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Recent audit records</h2>
      {audit.length === 0 ? <p class="muted">No operations yet.</p> : null}
      <ul class="audit">
        {audit.map((l, i) => (
          <li key={i}>{l.text.slice("audit: ".length)}</li>
        ))}
      </ul>
    </section>
  );
}

export function RunDetail({ ns, name }: { ns: string; name: string }) {
  const api = `/api/namespaces/${encodeURIComponent(ns)}`;
  const base = `${api}/runs/${encodeURIComponent(name)}`;
  const live = useLiveList<Run>(`${api}/watch/run?name=${encodeURIComponent(name)}`);
  const events = useLiveList<EventSummary>(`${api}/watch/events?name=${encodeURIComponent(name)}`);
  const [dlError, setDlError] = useState<RequestFailed | undefined>();
  const run = live.items.value[0];
  const now = Date.now();
  const back = <a href={`/ns/${encodeURIComponent(ns)}/runs`}>← Runs</a>;
  if (live.error.value)
    return (
      <section>
        {back}
        <ErrorBox error={live.error.value} />
      </section>
    );
  if (!run)
    return (
      <section>
        {back}
        <p class="muted">{live.ready.value ? `Run ${name} does not exist (or was deleted).` : "Loading…"}</p>
      </section>
    );
  const s = run.status ?? {};
  const phase = (s.phase ?? "Pending") as RunPhase;
  const mode = modeOf(run);
  const stages = breakdown(s.timing);
  const { managedFields: _m, ...meta } = run.metadata as typeof run.metadata & { managedFields?: unknown };
  const outputs = Object.entries(s.outputs ?? {});
  const evs = [...events.items.value].sort((a, b) => (a.time < b.time ? -1 : 1));
  return (
    <article class="run-detail" aria-labelledby="run-h">
      {back}
      <div class="section-head">
        <h1 id="run-h">{name}</h1>
        <PhaseBadge phase={phase} />
        {s.reason ? (
          <span class="reason" data-testid="reason">
            {s.reason}
          </span>
        ) : null}
      </div>
      {s.message ? <p class="message">{s.message}</p> : null}
      {s.waitingReason && phase === "Pending" ? <p class="message">Waiting: {s.waitingReason}</p> : null}
      <div class="grid2">
        <section aria-labelledby="sum-h">
          <h2 id="sum-h">Summary</h2>
          <Kv
            rows={[
              ["Namespace", ns],
              ["Runtime", run.spec.runtime],
              ["Mode", mode],
              ["Attempt", s.attempt],
              ["Pod", s.assignment?.pod],
              ["Node", s.assignment?.node],
              ["Exit code", s.exitCode],
              ["Signal", s.signal],
              ["Endpoint", s.endpoint ? `${s.endpoint.pod}#${s.endpoint.attempt}` : undefined],
              [
                "Created",
                run.metadata.creationTimestamp
                  ? `${run.metadata.creationTimestamp} (${humanAge(run.metadata.creationTimestamp, now)} ago)`
                  : undefined,
              ],
            ]}
          />
        </section>
        <section aria-labelledby="tl-h">
          <h2 id="tl-h">Timeline</h2>
          <ol class="timeline" data-testid="timeline">
            {timeline(s.timing, s.endpoint?.readyMicros).map((t) => (
              <li key={t.label}>
                <b>{t.label}</b> <span class="muted">{stamp(t.micros)}</span>
              </li>
            ))}
          </ol>
          <h3>Conditions</h3>
          {(s.conditions ?? []).length === 0 ? <p class="muted">none</p> : null}
          <ul class="conditions">
            {(s.conditions ?? []).map((c) => (
              <li key={c.type}>
                <b>{c.type}</b>={c.status} {c.reason ? <span>({c.reason})</span> : null}{" "}
                <span class="muted">{c.message}</span>
              </li>
            ))}
          </ul>
        </section>
      </div>
      <section aria-labelledby="lat-h">
        <h2 id="lat-h">Latency breakdown</h2>
        <TimingChart stages={stages} />
      </section>
      {mode === "function" ? <InvokeBox base={base} ready={phase === "Ready"} /> : null}
      {mode === "session" ? <Audit base={base} /> : null}
      <section aria-labelledby="out-h">
        <h2 id="out-h">Outputs</h2>
        {outputs.length === 0 ? <p class="muted">none</p> : <Kv rows={outputs} />}
      </section>
      {s.stdoutTail || s.stderrTail ? (
        <section aria-labelledby="tails-h">
          <h2 id="tails-h">Output tails (status)</h2>
          {s.stdoutTail ? (
            <>
              <h3>stdout{s.stdoutTruncated ? " (last 16 KiB)" : ""}</h3>
              <pre class="tail" data-testid="stdout-tail">
                {s.stdoutTail}
              </pre>
            </>
          ) : null}
          {s.stderrTail ? (
            <>
              <h3>stderr{s.stderrTruncated ? " (last 16 KiB)" : ""}</h3>
              <pre class="tail stderr" data-testid="stderr-tail">
                {s.stderrTail}
              </pre>
            </>
          ) : null}
        </section>
      ) : null}
      {(s.artifactRefs ?? []).length ? (
        <section aria-labelledby="art-h">
          <h2 id="art-h">Artifacts</h2>
          {dlError ? <ErrorBox error={dlError} /> : null}
          <ul class="artifacts">
            {(s.artifactRefs ?? []).map((a) => (
              <li key={a.name}>
                <button
                  type="button"
                  onClick={() =>
                    download(`${base}/artifacts/${encodeURIComponent(a.name)}`, a.name).then(
                      () => setDlError(undefined),
                      setDlError,
                    )
                  }
                >
                  ⤓ {a.name}
                </button>{" "}
                <span class="muted">
                  {a.type}
                  {a.size !== undefined ? `, ${a.size} bytes` : ""}
                  {a.attempt ? `, attempt ${a.attempt}` : ""}
                </span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <section aria-labelledby="ev-h">
        <h2 id="ev-h">Events</h2>
        {events.error.value ? <ErrorBox error={events.error.value} /> : null}
        {evs.length === 0 ? <p class="muted">none</p> : null}
        <ul class="events">
          {evs.map((e) => (
            <li key={e.uid} class={e.type === "Warning" ? "warn" : ""}>
              <b>{e.reason}</b> {e.message}{" "}
              <span class="muted">
                {humanAge(e.time, now)} ago{e.count > 1 ? ` ×${e.count}` : ""}
              </span>
            </li>
          ))}
        </ul>
      </section>
      <LogView base={base} attempts={Math.max(s.attempt ?? 0, s.assignment?.attempt ?? 0)} />
      <details>
        <summary>
          <h2 class="inline">Spec (YAML)</h2>
        </summary>
        <YamlView value={{ apiVersion: run.apiVersion, kind: run.kind, metadata: meta, spec: run.spec }} />
      </details>
    </article>
  );
}
