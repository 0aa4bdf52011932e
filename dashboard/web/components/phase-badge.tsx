/** A phase as colour, icon and word (never colour alone). */
import { PHASE_ICON, phaseTone } from "../lib/phases.ts";

/** Run phases, and the workflow, job and step phases (the same words, plus Skipped). */
export function PhaseBadge({ phase }: { phase: string }) {
  return (
    <span class={`phase tone-${phaseTone(phase)}`} data-phase={phase}>
      <span aria-hidden="true">{PHASE_ICON[phase as keyof typeof PHASE_ICON] ?? "?"}</span> {phase}
    </span>
  );
}
