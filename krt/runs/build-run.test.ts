import { describe, expect, test } from "bun:test";
import { artifactInputOf, buildRun, commandLine, type RunFlags } from "./build-run.ts";

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

describe("--artifact-input RUN/NAME[:PATH]", () => {
  test("parsed into spec.artifactInputs, path only when given", () => {
    const spec = buildRun(
      flags({ args: ["ls"], artifactInputs: ["build/report.txt", "build/site:public/site"] }),
      "ns",
      1,
    ).spec;
    expect(spec.artifactInputs).toEqual([
      { run: "build", name: "report.txt" },
      { run: "build", name: "site", path: "public/site" },
    ]);
    expect(buildRun(flags({ args: ["ls"] }), "ns", 1).spec.artifactInputs).toBeUndefined();
    expect(artifactInputOf("my.run-1/a_b.tar:x/y.z")).toEqual({
      run: "my.run-1",
      name: "a_b.tar",
      path: "x/y.z",
    });
  });

  test.each([
    ["report.txt", "RUN is not a Run name"],
    ["/report.txt", "RUN is not a Run name"],
    ["Build/x", "RUN is not a Run name"],
    ["build/", "NAME is not an artifact name"],
    ["build/a/b", "NAME is not an artifact name"],
    ["build/x:", "PATH must be relative"],
    ["build/x:/etc/passwd", "PATH must be relative"],
    ["build/x:a/../b", "PATH must be relative"],
    ["build/x:./a", "PATH must be relative"],
  ])("%p is refused: %s", (given, why) => {
    expect(() => buildRun(flags({ args: ["ls"], artifactInputs: [given] }), "ns", 1)).toThrow(
      `--artifact-input "${given}": ${why}`,
    );
  });

  test("tasks only, and at most the API's count", () => {
    expect(() =>
      buildRun(
        flags({ file: "f.py", script: "x", artifactInputs: ["a/b"], function: { handler: "handler" } }),
        "ns",
        1,
      ),
    ).toThrow("--artifact-input is for tasks");
    const many = Array.from({ length: 33 }, (_, i) => `r/a${i}`);
    expect(() => buildRun(flags({ args: ["ls"], artifactInputs: many }), "ns", 1)).toThrow(
      "--artifact-input given 33 times, at most 32 are allowed",
    );
  });
});
