/**
 * `krt describe`: the spec, the status, a microsecond timing breakdown of the current attempt
 * (scheduled − created, started − scheduled, finished − started), conditions and events.
 */
import { FunctionLimits, type Run, runModeOf } from "@kruntimes/api";
import { humanAge, humanMicros } from "../output/age.ts";
import { conditionsSection, eventsSection, indent, type KubeEvent } from "../output/describe-sections.ts";

// Re-exported: `krt describe` and `krt wfrun describe` fetch the events through these.
export { eventTime, type KubeEvent } from "../output/describe-sections.ts";

export function describeRun(run: Run, events: readonly KubeEvent[], nowMs: number): string {
  const out: string[] = [];
  const line = (k: string, v: string | number | undefined, indent = 0) => {
    const label = `${k}:`;
    const padded = label.length < 22 - indent ? label.padEnd(22 - indent) : `${label} `;
    if (v !== undefined && v !== "") out.push(`${" ".repeat(indent)}${padded}${v}`);
  };
  const m = run.metadata;
  const spec = run.spec;
  const s = run.status ?? {};
  line("Name", m.name);
  line("Namespace", m.namespace);
  line(
    "Created",
    m.creationTimestamp ? `${m.creationTimestamp} (${humanAge(m.creationTimestamp, nowMs)} ago)` : "",
  );
  out.push("Spec:");
  line("Runtime", spec.runtime, 2);
  line("Mode", runModeOf(spec), 2);
  if (spec.source?.inline) line("Inline script", `${spec.source.inline.length} characters`, 2);
  line("Entrypoint", spec.mode.task?.entrypoint, 2);
  if (spec.mode.task?.args?.length) line("Args", JSON.stringify(spec.mode.task.args), 2);
  if (spec.env?.length) line("Env", spec.env.map((e) => `${e.name}=${e.value}`).join(" "), 2);
  line("Timeout", spec.timeout, 2);
  line("Max attempts", spec.retryPolicy?.maxAttempts, 2);
  line(
    "TTL after finish",
    spec.ttlSecondsAfterFinished !== undefined ? `${spec.ttlSecondsAfterFinished}s` : "",
    2,
  );
  line("Termination", spec.termination?.mode, 2);
  const fn = spec.mode.function;
  if (fn) {
    out.push("  Function:");
    line("Handler", fn.handler ?? "handler", 4);
    line("Concurrency", fn.concurrency ?? FunctionLimits.defaultConcurrency, 4);
    line("Idle timeout", fn.idleTimeout ?? "never", 4);
    line(
      "Invocation timeout",
      fn.invocationTimeout ?? `${FunctionLimits.defaultInvocationTimeoutMs / 1000}s (default)`,
      4,
    );
    line("Max request", bytesText(fn.maxRequestBytes ?? FunctionLimits.defaultMaxRequestBytes), 4);
    line("Max response", bytesText(fn.maxResponseBytes ?? FunctionLimits.defaultMaxResponseBytes), 4);
  }
  out.push("Status:");
  line("Phase", s.phase ?? "Pending", 2);
  line("Reason", s.reason, 2);
  line("Waiting reason", s.waitingReason, 2);
  line("Message", s.message, 2);
  line("Attempt", s.attempt, 2);
  if (s.assignment)
    line("Pod", `${s.assignment.pod} (uid ${s.assignment.podUID}, attempt ${s.assignment.attempt})`, 2);
  line("Node", s.assignment?.node, 2);
  if (s.endpoint)
    line("Endpoint", `${s.endpoint.pod} (uid ${s.endpoint.podUID}, attempt ${s.endpoint.attempt})`, 2);
  line("Exit code", s.exitCode, 2);
  line("Signal", s.signal, 2);
  if (s.outputs && Object.keys(s.outputs).length)
    line(
      "Outputs",
      Object.entries(s.outputs)
        .map(([k, v]) => `${k}=${v}`)
        .join(" "),
      2,
    );
  out.push("Timing (current attempt):", ...timingLines(run));
  out.push(...conditionsSection(s.conditions ?? [], nowMs));
  if (s.stdoutTail) out.push("Stdout (tail):", indent(s.stdoutTail.trimEnd()));
  if (s.stderrTail) out.push("Stderr (tail):", indent(s.stderrTail.trimEnd()));
  out.push(...eventsSection(events, nowMs));
  return out.join("\n");
}

function timingLines(run: Run): string[] {
  const t = run.status?.timing ?? {};
  const created = t.createdMicros;
  const stamps: [string, number | undefined][] = [
    ["created", created],
    ["scheduled", t.scheduledMicros],
    ["started", t.startedMicros],
    ["ready", run.status?.endpoint?.readyMicros],
    ["finished", t.finishedMicros],
    ["reported", t.reportedMicros],
  ];
  const lines: string[] = [];
  for (const [k, v] of stamps)
    if (v !== undefined) lines.push(`  ${`${k}:`.padEnd(20)}${new Date(v / 1000).toISOString()} (${v}µs)`);
  const span = (label: string, a?: number, b?: number) => {
    if (a !== undefined && b !== undefined) lines.push(`  ${`${label}:`.padEnd(20)}${humanMicros(b - a)}`);
  };
  span("schedule (sch−cre)", created, t.scheduledMicros);
  span("start (sta−sch)", t.scheduledMicros, t.startedMicros);
  span("ready (rdy−sch)", t.scheduledMicros, run.status?.endpoint?.readyMicros);
  span("execute (fin−sta)", t.startedMicros, t.finishedMicros);
  span("report (rep−fin)", t.finishedMicros, t.reportedMicros);
  span("total (fin−cre)", created, t.finishedMicros);
  return lines.length ? lines : ["  <none>"];
}

/** 1048576 → `1Mi (1048576 bytes)`. */
function bytesText(n: number): string {
  if (n % 1024 ** 2 === 0) return `${n / 1024 ** 2}Mi`;
  if (n % 1024 === 0) return `${n / 1024}Ki`;
  return `${n} bytes`;
}
