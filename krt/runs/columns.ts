/** The table columns of `krt list` / `krt get` (`-o wide` adds the wide ones). */
import { type Run, runModeOf } from "@kruntimes/api";
import { humanAge, humanMicros } from "../output/age.ts";
import type { Column } from "../output/table.ts";

export function runColumns(nowMs: number, allNamespaces: boolean): Column<Run>[] {
  const cols: Column<Run>[] = [
    { header: "NAME", value: (r) => r.metadata.name ?? "" },
    { header: "RUNTIME", value: (r) => r.spec.runtime },
    { header: "MODE", value: (r) => runModeOf(r.spec) },
    { header: "PHASE", value: (r) => r.status?.phase ?? "Pending" },
    { header: "EXIT", value: (r) => (r.status?.exitCode !== undefined ? String(r.status.exitCode) : "") },
    { header: "ATTEMPT", value: (r) => (r.status?.attempt ? String(r.status.attempt) : "") },
    { header: "AGE", value: (r) => humanAge(r.metadata.creationTimestamp, nowMs) },
    { header: "POD", value: (r) => r.status?.assignment?.pod ?? "", wide: true },
    // Function Runs: the pod and attempt serving invocations while Ready.
    { header: "ENDPOINT", value: (r) => endpointText(r), wide: true },
    { header: "REASON", value: (r) => r.status?.reason ?? r.status?.waitingReason ?? "", wide: true },
    { header: "DURATION", value: (r) => runDuration(r), wide: true },
  ];
  if (allNamespaces) cols.unshift({ header: "NAMESPACE", value: (r) => r.metadata.namespace ?? "" });
  return cols;
}

/** created → finished of the current attempt, in microsecond precision, when both are known. */
function runDuration(r: Run): string {
  const t = r.status?.timing;
  return t?.createdMicros !== undefined && t.finishedMicros !== undefined
    ? humanMicros(t.finishedMicros - t.createdMicros)
    : "";
}

/** `pod#attempt` of a Ready function Run. */
export function endpointText(r: Run): string {
  const e = r.status?.endpoint;
  return e ? `${e.pod}#${e.attempt}` : "";
}
