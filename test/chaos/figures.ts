/** The chaos suite's figures: one row per fault and the totals, printed as a Markdown table. */

export interface FaultRecord {
  name: string;
  /** How long the fault itself lasted (an outage's length, a restart's down time), ms. */
  outageMs: number;
  /** From the fault's end to the first moment a new task Run, an invocation and a session op had all succeeded, ms. */
  recoveryMs: number;
  /** Task Runs created up to the end of this fault's checkpoint. */
  runsSoFar: number;
  invokeFailures: number;
  sessionFailures: number;
  problems: string[];
}

export interface Totals {
  runs: number;
  faults: number;
  lost: number;
  doubled: number;
  stuck: number;
  wrong: number;
  invocations: number;
  invokeFailures: number;
  sessionOps: number;
  sessionFailures: number;
  orphans: number;
  seconds: number;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
}

const sec = (ms: number) => (ms / 1000).toFixed(1);

export function figuresMarkdown(faults: readonly FaultRecord[], t: Totals): string {
  const rec = faults.map((f) => f.recoveryMs);
  const rows = faults.map(
    (f) =>
      `| ${f.name} | ${sec(f.outageMs)} | ${sec(f.recoveryMs)} | ${f.invokeFailures} | ${f.sessionFailures} | ${f.problems.length ? f.problems.join("; ").slice(0, 300) : "none"} |`,
  );
  return [
    `Runs ${t.runs}, faults ${t.faults}, lost ${t.lost}, doubled ${t.doubled}, stuck ${t.stuck}, wrong phase ${t.wrong}, orphans ${t.orphans}; recovery p50 ${sec(percentile(rec, 50))} s, max ${sec(Math.max(0, ...rec))} s; invocations ${t.invocations} (${t.invokeFailures} failed), session ops ${t.sessionOps} (${t.sessionFailures} failed); ${t.seconds.toFixed(0)} s in all`,
    "",
    "| fault | outage s | recovery s | failed invocations | failed session ops | invariant violations |",
    "| ----- | -------: | ---------: | -----------------: | -----------------: | -------------------- |",
    ...rows,
  ].join("\n");
}
