/** The `krt bench` scenarios: how many Runs, how fast they arrive, the pool they land on, the work. */
import type { RunSource, RunSpec } from "@kruntimes/api";

export type RuntimeLanguage = "bash" | "python";
export const LANGUAGES: readonly RuntimeLanguage[] = ["bash", "python"];

export type Work = "noop" | "sleep-500ms";

export interface Scenario {
  name: string;
  description: string;
  runs: number;
  /** Creates in flight at once: the next is sent when one is answered. */
  concurrency: number;
  /**
   * One Run at a time instead: the next is created when the previous one's end is seen (a
   * closed loop), so no two Runs are ever in the system together.
   */
  oneAtATime?: boolean;
  pods: number;
  slotsPerPod: number;
  work: Work;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "hotpath",
    description: "no-op Runs on an idle warm pool: the latency of the hot path",
    runs: 50,
    concurrency: 25,
    pods: 2,
    slotsPerPod: 64,
    work: "noop",
  },
  {
    name: "serial",
    description: "no-op Runs one at a time: the hot path's latency without queueing in the apiserver",
    runs: 30,
    concurrency: 1,
    oneAtATime: true,
    pods: 2,
    slotsPerPod: 64,
    work: "noop",
  },
  {
    name: "backlog",
    description: "500 ms Runs on a small pool: queueing and release at capacity",
    runs: 40,
    concurrency: 40,
    pods: 2,
    slotsPerPod: 4,
    work: "sleep-500ms",
  },
  {
    name: "burst",
    description: "2,000 no-op Runs, 64 creates in flight: throughput",
    runs: 2000,
    concurrency: 64,
    pods: 2,
    slotsPerPod: 64,
    work: "noop",
  },
];

/** How the Runs (or floor chains) arrive, in words. */
export function arrivalsText(a: { concurrency: number; oneAtATime?: boolean }): string {
  return a.oneAtATime ? "one at a time" : `${a.concurrency} creates in flight`;
}

export function scenarioNamed(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

/** The Run spec for one unit of `work` in `language` (an inline, standalone script). */
export function workSpec(runtime: string, language: RuntimeLanguage, work: Work): RunSpec {
  const scripts: Record<RuntimeLanguage, Record<Work, string>> = {
    bash: { noop: "true\n", "sleep-500ms": "sleep 0.5\n" },
    python: { noop: "pass\n", "sleep-500ms": "import time\ntime.sleep(0.5)\n" },
  };
  const source: RunSource = { inline: scripts[language][work] };
  return { runtime, mode: { task: {} }, source };
}
