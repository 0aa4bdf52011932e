/**
 * The Runtime Server conformance suite: one set of checks that every Runtime Server must pass,
 * run against a target (how to start the server) and its language scripts. It starts real
 * server processes on temporary sockets and drives them with a real Connect client.
 */

import { afterAll, beforeAll, describe } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageScripts } from "./language-scripts.ts";
import { SERVER_TIMEOUT_MS, ServerProcess, type ServerTarget } from "./server-process.ts";
import { directoriesSuite } from "./suite/directories.ts";
import { executionsSuite } from "./suite/executions.ts";
import { functionSuite } from "./suite/functions.ts";
import type { SuiteContext } from "./suite/helpers.ts";
import { inputSuite } from "./suite/inputs.ts";
import { processControlSuite } from "./suite/process-control.ts";
import { reportingSuite } from "./suite/reporting.ts";
import { serverLifeSuite } from "./suite/server-life.ts";
import { sessionsSuite } from "./suite/sessions.ts";

/** The container environment of the shared server (checked by the env precedence tests). */
export const CONTAINER_ENV = { CONF_A: "container", CONF_B: "container" };

/**
 * A HOME whose shell and python start-up files announce themselves on stderr: a script run
 * cold never reads them, so a warm interpreter must not either (the warm/cold comparison sees it).
 */
export function noisyHome(): string {
  const home = mkdtempSync(join(tmpdir(), "krt-rs-home-"));
  for (const file of [".bashrc", ".bash_profile", ".profile"]) {
    writeFileSync(join(home, file), `echo "startup file ${file} ran" >&2\n`);
  }
  writeFileSync(join(home, ".pythonrc.py"), "import sys; print('startup file ran', file=sys.stderr)\n");
  return home;
}

export function runConformance(target: ServerTarget, scripts: LanguageScripts): void {
  describe(`Runtime Server conformance: ${target.name}`, () => {
    let shared: ServerProcess | undefined;
    const home = noisyHome();
    const env = { ...CONTAINER_ENV, HOME: home, PYTHONSTARTUP: join(home, ".pythonrc.py") };
    beforeAll(async () => {
      shared = await ServerProcess.start(target, { warmPool: 2, env });
    }, SERVER_TIMEOUT_MS);
    afterAll(async () => {
      await shared?.stop();
      rmSync(home, { recursive: true, force: true });
    }, SERVER_TIMEOUT_MS);
    const ctx: SuiteContext = {
      target,
      scripts,
      containerEnv: env,
      server: () => {
        if (shared === undefined) throw new Error("the shared server did not start");
        return shared;
      },
    };
    inputSuite(ctx);
    processControlSuite(ctx);
    reportingSuite(ctx);
    executionsSuite(ctx);
    serverLifeSuite(ctx);
    sessionsSuite(ctx);
    functionSuite(ctx);
    directoriesSuite(ctx);
  });
}

/** The server of this repository, run from source with bun: `--runtime <language>`. */
export function sourceTarget(language: string, entry: string): ServerTarget {
  return {
    name: `${language} (source)`,
    argv: (s) => [process.execPath, entry, ...serverFlags(language, s)],
  };
}

/** Flags of this repository's server for the suite's settings (the compiled binary takes the same). */
export function serverFlags(language: string, s: import("./server-process.ts").ServerSettings): string[] {
  return [
    "--runtime",
    language,
    "--socket",
    s.socket,
    "--workspace",
    s.workspace,
    "--state-dir",
    s.stateDir,
    "--warm-pool",
    String(s.warmPool),
    "--max-concurrent",
    String(s.maxConcurrent),
    "--drain-timeout-ms",
    String(s.drainTimeoutMs),
    "--default-grace-ms",
    String(s.defaultGraceMs),
    "--log-level",
    "warn",
  ];
}
