#!/usr/bin/env bun
/**
 * krt entry point: reads argv and the environment once, parses flags with clipanion, and exits
 * with the code the command returned. A parse error (unknown flag, missing argument) exits 64
 * with one `error:` and one `hint:` line.
 */
import { Cli } from "clipanion";
import { createCli } from "./cli.ts";
import { type KrtContext, wallClockMicros } from "./context.ts";
import { ExitCode } from "./exit-codes.ts";
import { describeParseError } from "./parse-errors.ts";

async function main(argv: string[]): Promise<number> {
  const cli = createCli();
  const context: KrtContext = { ...Cli.defaultContext, env: { ...process.env }, nowMicros: wallClockMicros };
  let command: ReturnType<typeof cli.process>;
  try {
    command = cli.process(argv, context);
  } catch (e) {
    const { message, hint } = describeParseError(e as Error, argv);
    process.stderr.write(`error: ${message}\nhint: ${hint}\n`);
    return ExitCode.Usage;
  }
  return cli.run(command, context);
}

// No top-level await: `bun build --compile --bytecode` emits CommonJS.
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
