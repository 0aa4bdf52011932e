/** The dashboard's pino logger: JSON lines; tokens travel in headers, which are never logged (redacted anyway). */
import pino, { type Logger } from "pino";

export function dashboardLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino(
    {
      level,
      base: { component: "dashboard" },
      redact: ["authorization", "token", "*.authorization", "*.token"],
    },
    pino.destination(fd),
  );
}
