/**
 * ANSI colours for human output: only when the stream is a terminal, NO_COLOR is unset and TERM is
 * not `dumb` (https://no-color.org). With colours off every function returns its text unchanged,
 * so text output and tests do not depend on the terminal.
 */

export interface Paint {
  enabled: boolean;
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  blue(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

export function colourEnabled(stream: unknown, env: Record<string, string | undefined>): boolean {
  const tty = Boolean((stream as { isTTY?: boolean } | undefined)?.isTTY);
  return tty && env.NO_COLOR === undefined && env.TERM !== "dumb";
}

export function paint(enabled: boolean): Paint {
  const sgr = (open: number, close: number) => (s: string) =>
    enabled && s ? `\u001b[${open}m${s}\u001b[${close}m` : s;
  return {
    enabled,
    green: sgr(32, 39),
    red: sgr(31, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    dim: sgr(2, 22),
    bold: sgr(1, 22),
  };
}

/** Phase words coloured by outcome: green done, red failed, yellow in progress, dim not run. */
export function paintPhase(p: Paint, phase: string): string {
  switch (phase) {
    case "Succeeded":
    case "Ready":
      return p.green(phase);
    case "Failed":
    case "Timeout":
      return p.red(phase);
    case "Running":
      return p.yellow(phase);
    case "Pending":
      return p.blue(phase);
    default:
      return p.dim(phase);
  }
}
