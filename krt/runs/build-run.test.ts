import { describe, expect, test } from "bun:test";
import { buildRun, commandLine, type RunFlags } from "./build-run.ts";

const flags = (f: Partial<RunFlags>): RunFlags => ({ runtime: "bash", args: [], env: [], ...f }) as RunFlags;

describe("the words after -- are one command line", () => {
  test("one word is the line itself, shell or python syntax kept", () => {
    expect(commandLine(["echo a && echo b"])).toBe("echo a && echo b");
    expect(commandLine(["print(42)"])).toBe("print(42)");
  });
  test("several words: joined, quoted where the shell would otherwise split or expand them", () => {
    expect(commandLine(["echo", "hi"])).toBe("echo hi");
    expect(commandLine(["ls", "my file", "$HOME", "it's"])).toBe(`ls 'my file' '$HOME' 'it'\\''s'`);
    expect(commandLine(["curl", "-fsS", "https://example.com/a?b=1"])).toBe(
      "curl -fsS 'https://example.com/a?b=1'",
    );
  });
  test("sent as the inline script; with --entrypoint they stay its arguments", () => {
    expect(buildRun(flags({ args: ["echo", "hi"] }), "ns", 1).spec).toEqual({
      runtime: "bash",
      mode: { task: {} },
      source: { inline: "echo hi" },
    });
    expect(buildRun(flags({ entrypoint: "/opt/job.sh", args: ["--fast", "3"] }), "ns", 1).spec.mode).toEqual({
      task: { entrypoint: "/opt/job.sh", args: ["--fast", "3"] },
    });
  });
  test("an empty command is a usage error", () => {
    expect(() => buildRun(flags({ args: [""] }), "ns", 1)).toThrow("the command after -- is empty");
  });
});
