/**
 * Structured logs (pino, JSON lines on stderr so stdout stays free). Written synchronously: one
 * line per execution is cheap, and a fatal start-up error must not be lost to process.exit.
 */
import pino from "pino";

export type Logger = pino.Logger;

export function createLogger(level: string, bindings: Record<string, unknown>): Logger {
  return pino(
    { level, base: { component: "runtime-server", ...bindings } },
    pino.destination({ fd: 2, sync: true }),
  );
}
