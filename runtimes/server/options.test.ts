import { describe, expect, test } from "bun:test";
import { OptionsError, parseOptions } from "./options.ts";

describe("parseOptions", () => {
  test("defaults match the pod contract", () => {
    const o = parseOptions([], { TMPDIR: "/tmp", PATH: "/bin" }, 42);
    expect(o.socketPath).toBe("/var/run/kruntimes/runtime.sock");
    expect(o.language).toBe("bash");
    expect(o.runtimeName).toBe("bash");
    expect(o.interpreter).toBe("/bin/bash");
    expect(o.workspaceRoot).toBe("/workspace/runs");
    expect(o.stateDir).toBe("/tmp/kruntime-server.42");
    expect(o.warmPoolSize).toBe(2);
    expect(o.baseEnv).toEqual({ TMPDIR: "/tmp", PATH: "/bin" });
  });

  test("the controller's env sets socket and workspace; twins are not passed to Runs", () => {
    const o = parseOptions(["--runtime", "python"], {
      KRT_SOCKET: "/s/r.sock",
      KRT_WORKSPACE: "/w",
      KRT_WARM_POOL: "0",
      KRT_OTHER: "kept",
    });
    expect([o.socketPath, o.workspaceRoot, o.warmPoolSize, o.interpreter]).toEqual([
      "/s/r.sock",
      "/w/runs",
      0,
      "/usr/bin/python3",
    ]);
    expect(o.baseEnv).toEqual({ KRT_OTHER: "kept" });
  });

  test("flags win over the environment, in both spellings", () => {
    const o = parseOptions(["--socket=/a.sock", "--max-concurrent", "3", "--remove-workdirs=false"], {
      KRT_SOCKET: "/b.sock",
    });
    expect([o.socketPath, o.maxConcurrent, o.removeWorkdirs]).toEqual(["/a.sock", 3, false]);
  });

  const bad: Array<[string[], RegExp]> = [
    [["--runtime", "ruby"], /--runtime \(KRT_RUNTIME\) must be bash or python, got "ruby"/],
    [["--warm-pool", "-1"], /--warm-pool \(KRT_WARM_POOL\) must be an integer >= 0/],
    [["--max-concurrent", "0"], /must be an integer >= 1/],
    [["--nope"], /unknown flag --nope/],
    [["stray"], /unexpected argument "stray"/],
    [["--socket"], /--socket needs a value/],
    [["--remove-workdirs=maybe"], /must be true or false/],
    [["--default-tail-bytes", "99999999"], /must be <= 1048576/],
  ];
  for (const [argv, message] of bad) {
    test(`rejects ${argv.join(" ")}`, () => {
      expect(() => parseOptions(argv, {})).toThrow(OptionsError);
      expect(() => parseOptions(argv, {})).toThrow(message);
    });
  }
});
