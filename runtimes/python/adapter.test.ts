import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pythonAdapter } from "./adapter.ts";

describe("python adapter", () => {
  test("the warm job is NUL-separated: cwd, script, argc, args, envc, env", () => {
    const job = pythonAdapter.warmJob(
      {
        plan: { files: [], scriptPath: "/s/x.py", args: ["a", "b c"] },
        cwd: "/w",
        env: { A: "1", B: "x=y" },
        stateDir: "/s",
      },
      {},
    );
    expect(new TextDecoder().decode(job).split("\0")).toEqual([
      "/w",
      "/s/x.py",
      "2",
      "a",
      "b c",
      "2",
      "A=1",
      "B=x=y",
    ]);
  });

  test("Runs that change what python reads at start-up are cold-started", () => {
    const base = { PATH: "/bin", HOME: "/root" };
    expect(pythonAdapter.warmEligible({ ...base, FOO: "1" }, base)).toBe(true);
    for (const key of ["PYTHONPATH", "PYTHONHASHSEED", "LANG", "LC_ALL", "HOME"]) {
      expect(pythonAdapter.warmEligible({ ...base, [key]: "x" }, base)).toBe(false);
    }
  });

  test("the bootstrap runs a job like a cold start (argv, __name__, cwd, env, exit status)", () => {
    const dir = mkdtempSync(join(tmpdir(), "krt-py-boot-"));
    const script = join(dir, "s.py");
    writeFileSync(
      script,
      "import os, sys\nprint(sys.argv, __name__, os.getcwd(), os.environ.get('K'))\nsys.exit(3)\n",
    );
    const job = pythonAdapter.warmJob(
      { plan: { files: [], scriptPath: script, args: ["x"] }, cwd: dir, env: { K: "v" }, stateDir: dir },
      {},
    );
    const proc = Bun.spawnSync({ cmd: pythonAdapter.warmArgv("/usr/bin/python3"), stdin: job });
    expect(proc.exitCode).toBe(3);
    expect(proc.stdout.toString()).toBe(`R['${script}', 'x'] __main__ ${dir} v\n`);
    rmSync(dir, { recursive: true, force: true });
  });
});
