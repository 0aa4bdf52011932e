import { describe, expect, test } from "bun:test";
import { Cli } from "clipanion";
import { createCli } from "./cli.ts";
import { describeParseError } from "./parse-errors.ts";

/** What krt prints for argv that does not parse (the message and hint lines, without prefixes). */
function parseError(argv: string[]): { message: string; hint: string } {
  try {
    createCli().process(argv, { ...Cli.defaultContext } as never);
  } catch (e) {
    return describeParseError(e as Error, argv);
  }
  throw new Error(`${argv.join(" ")} parsed`);
}

describe("flag-parse errors in one line", () => {
  test.each([
    [["--bogus"], 'krt: unknown option "--bogus"', "see `krt --help`"],
    [["run", "--nope"], 'krt run: unknown option "--nope"', "see `krt run --help`"],
    [["get"], "krt get: missing argument <run>", "usage: krt get <run>; see `krt get --help`"],
    [["get", "a", "b"], 'krt get: unexpected argument "b"', "usage: krt get <run>; see `krt get --help`"],
    [["run", "--timeout"], "krt run: --timeout needs a value", "see `krt run --help`"],
    [["session"], '"krt session" needs a subcommand: create, close', "e.g. `krt session create --help`"],
    // list/ls and delete/rm: each subcommand named once.
    [
      ["wfrun"],
      '"krt wfrun" needs a subcommand: list, get, describe, logs, cancel, delete',
      "e.g. `krt wfrun list --help`",
    ],
    [["frobnicate"], 'unknown command "krt frobnicate"', "see `krt --help` for the commands"],
  ])("%p", (argv, message, hint) => {
    const got = parseError(argv as string[]);
    expect(got).toEqual({ message: message as string, hint: hint as string });
    expect(got.message).not.toContain("\n");
  });
});
