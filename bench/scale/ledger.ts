/**
 * The host ledger of the scale benchmark: every Run's script appends `<run name> <attempt>` to
 * one file on the host (Runtime pods of the local cluster are host processes). Judged against
 * the names the benchmark created: a name missing is a Run that never executed (lost), a line
 * written twice is an attempt that executed twice (doubled), a name with several attempts was
 * retried — in a burst with no fault injected, also a finding.
 */

export interface LedgerVerdict {
  lines: number;
  /** Created names with no line. */
  missing: string[];
  /** `<name> <attempt>` written more than once, with the count. */
  doubled: string[];
  /** Names with more than one distinct attempt. */
  retried: string[];
  /** Lines whose name was not created by this benchmark. */
  unknown: string[];
}

export function judgeLedger(text: string, created: Iterable<string>): LedgerVerdict {
  const perLine = new Map<string, number>();
  const attempts = new Map<string, Set<string>>();
  let lines = 0;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    lines++;
    perLine.set(line, (perLine.get(line) ?? 0) + 1);
    const sp = line.lastIndexOf(" ");
    const name = sp > 0 ? line.slice(0, sp) : line;
    const attempt = sp > 0 ? line.slice(sp + 1) : "";
    let set = attempts.get(name);
    if (!set) {
      set = new Set();
      attempts.set(name, set);
    }
    set.add(attempt);
  }
  const names = new Set(created);
  const v: LedgerVerdict = { lines, missing: [], doubled: [], retried: [], unknown: [] };
  for (const name of names) if (!attempts.has(name)) v.missing.push(name);
  for (const [line, n] of perLine) if (n > 1) v.doubled.push(`${line} ×${n}`);
  for (const [name, set] of attempts) {
    if (!names.has(name)) v.unknown.push(name);
    if (set.size > 1) v.retried.push(`${name} (attempts ${[...set].sort().join(", ")})`);
  }
  return v;
}
