/** The bash completion script, sourced into a real bash with a stand-in `krt` on PATH that lists names. */
import { beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCli } from "../cli.ts";
import { namesCommand } from "./completion.ts";

let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "krt-completion-"));
  const out: string[] = [];
  const cli = createCli();
  const ctx = {
    stdin: process.stdin,
    stderr: process.stderr,
    colorDepth: 1,
    stdout: { write: (s: string) => out.push(s) },
    env: {},
    nowMicros: () => 0,
  };
  const code = await cli.run(["completion", "bash"], ctx as never);
  expect(code).toBe(0);
  writeFileSync(join(dir, "krt.bash"), out.join(""));
  // Stands in for krt: prints names by what it was asked to list, and the scope flags it got.
  writeFileSync(
    join(dir, "krt"),
    `#!/bin/bash
case "$1 $2" in
  "list -o") echo run-a; echo run-b ;;
  "wfrun list") echo ci-x7k2p; echo ci-q9w3e ;;
  "workflow list") echo ci; echo nightly ;;
esac
[[ " $* " == *" -n team "* ]] && echo in-team
`,
  );
  chmodSync(join(dir, "krt"), 0o755);
});

async function complete(...words: string[]): Promise<string[]> {
  const script = `source ${dir}/krt.bash; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _krt; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const p = Bun.spawn(["bash", "-c", script], {
    env: { PATH: `${dir}:${process.env.PATH}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(code).toBe(0);
  return out.split("\n").filter(Boolean).sort();
}

describe("bash completion", () => {
  test("the workflow command groups complete their second word", async () => {
    expect(await complete("krt", "wfrun", "")).toEqual([
      "cancel",
      "delete",
      "describe",
      "get",
      "list",
      "logs",
    ]);
    expect(await complete("krt", "workflow", "")).toEqual(["get", "list", "trigger"]);
    expect(await complete("krt", "w")).toContain("wfrun");
  });
  test("WorkflowRun, Workflow and Run names from the matching list command, in the named namespace", async () => {
    expect(await complete("krt", "wfrun", "describe", "ci-x")).toEqual(["ci-x7k2p"]);
    expect(await complete("krt", "wfrun", "logs", "-n", "team", "")).toEqual([
      "ci-q9w3e",
      "ci-x7k2p",
      "in-team",
    ]);
    expect(await complete("krt", "workflow", "trigger", "")).toEqual(["ci", "nightly"]);
    expect(await complete("krt", "describe", "")).toEqual(["run-a", "run-b"]);
  });
  test("flags of the workflow commands; no names where a command takes none", async () => {
    expect(await complete("krt", "workflow", "trigger", "--w")).toEqual([
      "--wait",
      "--wait-timeout",
      "--with",
    ]);
    expect(await complete("krt", "wfrun", "list", "")).toContain("--workflow");
    expect(await complete("krt", "wfrun", "list", "")).not.toContain("ci-x7k2p");
  });
});

test("namesCommand by the positional's name", () => {
  expect(namesCommand("krt get <run>")).toBe("list");
  expect(namesCommand("krt wfrun logs [--job #0] <wfrun>")).toBe("wfrun list");
  expect(namesCommand("krt workflow trigger <workflow>")).toBe("workflow list");
  expect(namesCommand("krt runtime get <runtime>")).toBeUndefined();
});
