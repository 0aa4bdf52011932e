/**
 * `GET /api/namespaces/:ns/runs/:name/logs?attempt=N&follow=1`: a Run's output as Server-Sent
 * Events — `line` {stream, line, call?}, `note` {text}, then `end` {phase} or `error`. It is
 * `krt logs` itself (krt/logs: runtimed's output records read from the pod log through the
 * apiserver, the status tails when they are gone, attempts followed across retries) with a sink
 * that writes events; the caller's client is aborted when the browser closes the stream.
 */
import { type Run, RunResource } from "@kruntimes/api";
import { followRunLogs } from "@kruntimes/krt/logs/follow-logs.ts";
import type { LogSink } from "@kruntimes/krt/logs/log-sink.ts";
import { readRunLogs } from "@kruntimes/krt/logs/read-logs.ts";
import { path } from "@kruntimes/kube";
import type { Callers } from "./callers.ts";
import { DashboardError } from "./errors.ts";
import type { Metrics } from "./metrics.ts";
import { sseResponse } from "./sse.ts";

export async function logsRoute(
  callers: Callers,
  metrics: Metrics,
  request: Request,
  namespace: string,
  name: string,
): Promise<Response> {
  const q = new URL(request.url).searchParams;
  const attemptText = q.get("attempt");
  const attempt = attemptText ? Number(attemptText) : undefined;
  if (attempt !== undefined && !(Number.isInteger(attempt) && attempt >= 1))
    throw new DashboardError(400, "BadRequest", `attempt "${attemptText}" must be a whole number from 1`);
  const follow = q.get("follow") === "1" || q.get("follow") === "true";
  const abort = new AbortController();
  const { client } = callers.of(request, abort.signal);
  let run: Run;
  try {
    run = await client.get<Run>(path(RunResource, namespace, name));
  } catch (e) {
    abort.abort();
    throw DashboardError.from(e, `get runs in namespace ${namespace}`);
  }
  metrics.streams.inc({ kind: "logs" });
  return sseResponse(
    request,
    async (sse) => {
      const sink: LogSink = {
        line: (stream, line, call) => sse.send("line", call ? { stream, line, call } : { stream, line }),
        note: (text) => sse.send("note", { text }),
      };
      try {
        let final = run;
        if (follow) final = await followRunLogs(client, namespace, name, { attempt }, sink);
        else await readRunLogs(client, run, { attempt, tailFallback: true }, sink);
        sse.send("end", { phase: final.status?.phase ?? "Pending" });
      } catch (e) {
        if (abort.signal.aborted) return;
        sse.send("error", DashboardError.from(e, `get pods/log in namespace ${namespace}`).toJSON());
      }
    },
    () => {
      abort.abort();
      metrics.streams.dec({ kind: "logs" });
    },
  );
}
