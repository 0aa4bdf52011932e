/**
 * How a phase looks: a colour class (contrast checked in both themes, styles.css) and an icon,
 * so a phase never depends on colour alone.
 */
import { RUN_PHASES, type RunPhase, TERMINAL_PHASES } from "@kruntimes/api/src/reasons.ts";

export { RUN_PHASES, TERMINAL_PHASES };

export const PHASE_ICON: Record<RunPhase | "Skipped", string> = {
  Pending: "◌",
  Scheduled: "⇢",
  Running: "▶",
  Ready: "●",
  Finalizing: "⋯",
  Succeeded: "✓",
  Failed: "✕",
  Timeout: "◷",
  Cancelled: "⊘",
  Skipped: "↷",
};

export type PhaseTone = "waiting" | "active" | "ok" | "bad" | "muted";

/** Run phases and the workflow/job/step phases, which use the same words (plus Skipped). */
export function phaseTone(p: string): PhaseTone {
  switch (p) {
    case "Pending":
    case "Scheduled":
      return "waiting";
    case "Running":
    case "Ready":
    case "Finalizing":
      return "active";
    case "Succeeded":
      return "ok";
    case "Failed":
    case "Timeout":
      return "bad";
    default:
      return "muted";
  }
}

export const isTerminal = (p: string) => (TERMINAL_PHASES as readonly string[]).includes(p);
