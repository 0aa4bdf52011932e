#!/usr/bin/env bun
/**
 * krt entry point: reads argv and the environment once, parses flags with clipanion, and exits
 * with the code the command returned. A parse error (unknown flag, missing argument) exits 64.
 */
import { Cli } from "clipanion";
import { createCli } from "./cli.ts";
import { type KrtContext, wallClockMicros } from "./context.ts";
import { ExitCode } from "./exit-codes.ts";

async function main(argv: string[]): Promise<number> {
  const cli = createCli();
  const context: KrtContext = { ...Cli.defaultContext, env: { ...process.env }, nowMicros: wallClockMicros };
  let command: ReturnType<typeof cli.process>;
  try {
    command = cli.process(argv, context);
  } catch (e) {
    process.stderr.write(cli.error(e, { colored: false }));
    process.stderr.write("hint: see `krt --help` or `krt <command> --help`\n");
    return ExitCode.Usage;
  }
  return cli.run(command, context);
}

// No top-level await: `bun build --compile --bytecode` emits CommonJS.
main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
