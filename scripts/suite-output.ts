/**
 * Reading one `bun test` process's output for scripts/run-suites.ts: its pass/fail counts, and
 * what to repeat of it when it failed. CI logs are often read from their tail only, and a failed
 * file's output sits far above the summary; the excerpts put each failure's message there too.
 */

/** The number bun prints before `word` on a line of its own (`  12 pass`), 0 when absent. */
export function countOf(text: string, word: "pass" | "fail"): number {
  return Number(new RegExp(`^\\s*(\\d+) ${word}$`, "m").exec(text)?.[1] ?? 0);
}

const RESULT = /^\((pass|fail|skip|todo)\) /;

/**
 * Each failed test's block: bun prints a failure's source excerpt, error and stack right above its
 * `(fail)` line, after the previous test's result line and whatever the test logged. A block
 * longer than `maxLines` keeps its last lines, where the error is. When no `(fail)` line is there (the
 * process crashed, a hook failed, a file did not load) the output's last `maxLines` lines stand in.
 */
export function failureExcerpts(text: string, maxLines = 40): string[] {
  const lines = text.split("\n");
  const out: string[] = [];
  let start = 0;
  lines.forEach((line, i) => {
    const m = RESULT.exec(line);
    if (!m) return;
    if (m[1] === "fail") {
      const block = lines.slice(start, i).filter((l) => l.trim() !== "");
      const kept = block.length > maxLines ? ["  …", ...block.slice(-maxLines)] : block;
      out.push([...kept, line].join("\n"));
    }
    start = i + 1;
  });
  if (out.length === 0) {
    const tail = lines.filter((l) => l.trim() !== "").slice(-maxLines);
    if (tail.length > 0) out.push(tail.join("\n"));
  }
  return out;
}
