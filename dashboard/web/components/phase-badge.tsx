/** A phase as colour, icon and word (never colour alone). */
import type { RunPhase } from "@kruntimes/api/src/reasons.ts";
import { PHASE_ICON, phaseTone } from "../lib/phases.ts";

export function PhaseBadge({ phase }: { phase: RunPhase }) {
  return (
    <span class={`phase tone-${phaseTone(phase)}`} data-phase={phase}>
      <span aria-hidden="true">{PHASE_ICON[phase] ?? "?"}</span> {phase}
    </span>
  );
}
