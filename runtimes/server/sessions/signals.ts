/** Signal names SignalProcess accepts: the ones this platform knows ("SIGTERM", "TERM" too). */
import { constants } from "node:os";
import { Code } from "@connectrpc/connect";
import { sessionError } from "./session-error.ts";

export function killSignal(name: string): NodeJS.Signals {
  const full = name.startsWith("SIG") ? name : `SIG${name}`;
  if (!Object.hasOwn(constants.signals, full)) {
    throw sessionError(
      Code.InvalidArgument,
      `unknown signal ${JSON.stringify(name)} (e.g. SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGUSR1)`,
    );
  }
  return full as NodeJS.Signals;
}
