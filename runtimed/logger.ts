/** Structured logs (pino, JSON lines on stdout), with the pod in every record. */
import pino, { type Logger } from "pino";
import type { RuntimedOptions } from "./options.ts";

export type { Logger };

export function createLogger(o: RuntimedOptions): Logger {
  return pino({
    level: o.logLevel,
    base: { component: "runtimed", pod: o.pod.name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
