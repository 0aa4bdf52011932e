/**
 * A Run's output from `/logs` (the same records `krt logs` reads): everything written so far,
 * then live while the Run goes on when following. stderr lines are marked; notes (fallbacks,
 * attempt headers) are set apart. Stays scrolled to the bottom unless the reader scrolled up.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../../shared/types.ts";
import { openStream, RequestFailed } from "../lib/api.ts";
import { ErrorBox } from "./error-box.tsx";

export interface LogLine {
  kind: "stdout" | "stderr" | "note";
  text: string;
  call?: string;
}

const MAX_LINES = 5000;

export function useRunLogs(url: string): { lines: LogLine[]; error?: RequestFailed; ended?: string } {
  const [state, setState] = useState<{ lines: LogLine[]; error?: RequestFailed; ended?: string }>({
    lines: [],
  });
  useEffect(() => {
    let lines: LogLine[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      setState((s) => ({ ...s, lines }));
    };
    setState({ lines: [] });
    return openStream(url, {
      onEvent(event, data) {
        const d = data as {
          stream?: "stdout" | "stderr";
          line?: string;
          text?: string;
          call?: string;
          phase?: string;
        };
        if (event === "line")
          lines = [
            ...lines,
            { kind: d.stream ?? "stdout", text: d.line ?? "", ...(d.call ? { call: d.call } : {}) },
          ];
        else if (event === "note") lines = [...lines, { kind: "note", text: d.text ?? "" }];
        else if (event === "end") {
          setState((s) => ({ ...s, lines, ended: d.phase }));
          return;
        } else if (event === "error") {
          setState((s) => ({ ...s, lines, error: new RequestFailed(data as ApiError) }));
          return;
        }
        if (lines.length > MAX_LINES) lines = lines.slice(-MAX_LINES);
        if (!frame) frame = requestAnimationFrame(flush);
      },
      onError: (error) => setState((s) => ({ ...s, error })),
    });
  }, [url]);
  return state;
}

export function LogView({ base, attempts }: { base: string; attempts: number }) {
  const [attempt, setAttempt] = useState<number | undefined>(undefined);
  const [follow, setFollow] = useState(true);
  const q = new URLSearchParams();
  if (attempt) q.set("attempt", String(attempt));
  if (follow) q.set("follow", "1");
  const { lines, error, ended } = useRunLogs(`${base}/logs?${q}`);
  const box = useRef<HTMLPreElement>(null);
  const pinned = useRef(true);
  useEffect(() => {
    const el = box.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [lines]);
  return (
    <section aria-labelledby="logs-h">
      <div class="section-head">
        <h2 id="logs-h">Logs</h2>
        <label>
          Attempt{" "}
          <select
            value={attempt ?? ""}
            onChange={(e) => setAttempt(e.currentTarget.value ? Number(e.currentTarget.value) : undefined)}
          >
            <option value="">all</option>
            {Array.from({ length: attempts }, (_, i) => (
              <option key={i} value={i + 1}>
                {i + 1}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />{" "}
          follow
        </label>
        <span class="muted" data-testid="log-state">
          {ended ? `ended (${ended})` : follow ? "following…" : ""}
        </span>
      </div>
      {error ? <ErrorBox error={error} /> : null}
      <pre
        class="logs"
        ref={box}
        data-testid="logs"
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {lines.map((l, i) => (
          <div key={i} class={`log-${l.kind}`}>
            {l.call ? <span class="muted">[{l.call}] </span> : null}
            {l.kind === "note" ? `krt: ${l.text}` : l.text}
          </div>
        ))}
        {lines.length === 0 && !error ? <span class="muted">no output yet</span> : null}
      </pre>
    </section>
  );
}
