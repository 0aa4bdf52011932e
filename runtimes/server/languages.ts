/** The language adapters this server ships, by the name `--runtime` takes. */
import { bashAdapter } from "../bash/adapter.ts";
import { pythonAdapter } from "../python/adapter.ts";
import type { LanguageAdapter } from "./adapter.ts";
import type { Language } from "./options.ts";

export const adapters: Record<Language, LanguageAdapter> = { bash: bashAdapter, python: pythonAdapter };

const versionPrefix: Record<Language, string> = { bash: "GNU bash", python: "Python" };

/** "GNU bash 5.2.21(1)-release", "Python 3.12.3"; throws when the interpreter cannot run. */
export function interpreterVersion(adapter: LanguageAdapter, interpreter: string): string {
  let result: ReturnType<typeof Bun.spawnSync>;
  try {
    result = Bun.spawnSync({ cmd: adapter.versionArgv(interpreter), stdin: "ignore", stderr: "pipe" });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new Error(
      `interpreter ${interpreter} does not run (${detail}); set --interpreter to a working ${adapter.language}`,
    );
  }
  if (!result.success) {
    const detail = result.stderr?.toString().trim() || `exit status ${result.exitCode}`;
    throw new Error(
      `interpreter ${interpreter} does not run (${detail}); set --interpreter to a working ${adapter.language}`,
    );
  }
  return `${versionPrefix[adapter.language]} ${result.stdout?.toString().trim() ?? ""}`;
}

/**
 * Why this interpreter cannot be kept warm, or undefined when it can. bash before 5.0 has no
 * BASH_ARGV0, so a warm Run would see the bootstrap's $0 instead of its script's.
 */
export function warmUnsupported(language: Language, version: string): string | undefined {
  if (language !== "bash") return undefined;
  const major = Number(/GNU bash (\d+)\./.exec(version)?.[1] ?? "0");
  return major < 5 ? `${version} has no BASH_ARGV0 (bash 5.0+); every Run is cold-started` : undefined;
}
