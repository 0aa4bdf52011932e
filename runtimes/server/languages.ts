/** The language adapters this server ships, by the name `--runtime` takes. */
import { bashAdapter } from "../bash/adapter.ts";
import { pythonAdapter } from "../python/adapter.ts";
import type { LanguageAdapter } from "./adapter.ts";
import type { Language } from "./options.ts";

export const adapters: Record<Language, LanguageAdapter> = { bash: bashAdapter, python: pythonAdapter };

const versionPrefix: Record<Language, string> = { bash: "GNU bash", python: "Python" };

/** "GNU bash 5.2.21(1)-release", "Python 3.12.3"; throws when the interpreter cannot run. */
export function interpreterVersion(adapter: LanguageAdapter, interpreter: string): string {
  const result = Bun.spawnSync({ cmd: adapter.versionArgv(interpreter), stdin: "ignore", stderr: "pipe" });
  if (!result.success) {
    const detail = result.stderr.toString().trim() || `exit status ${result.exitCode}`;
    throw new Error(
      `interpreter ${interpreter} does not run (${detail}); set --interpreter to a working ${adapter.language}`,
    );
  }
  return `${versionPrefix[adapter.language]} ${result.stdout.toString().trim()}`;
}
