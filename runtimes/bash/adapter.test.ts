import { describe, expect, test } from "bun:test";
import { bashAdapter, commandsScript, jobScript, quote } from "./adapter.ts";

describe("bash adapter", () => {
  test("quote survives every quote character, checked by bash itself", () => {
    const words = ["plain", "it's", `"double"`, "$HOME `x` \\ !", "new\nline", ""];
    const script = `printf '%s\\0' ${words.map(quote).join(" ")}`;
    const out = Bun.spawnSync({ cmd: ["/bin/bash", "-c", script] }).stdout.toString();
    expect(out.split("\0").slice(0, -1)).toEqual(words);
  });

  test("commands run in order under set -e", () => {
    expect(commandsScript(["a", "b c"])).toBe("set -e\na\nb c\n");
  });

  test("the job exports only what differs from the warm interpreter's env", () => {
    const job = jobScript(
      {
        plan: { files: [], scriptPath: "/s/x.sh", args: ["a b"] },
        cwd: "/w/r",
        env: { SAME: "1", NEW: "it's" },
        stateDir: "/s",
      },
      { SAME: "1" },
    );
    expect(job).toContain("cd -- '/w/r' || exit 70");
    expect(job).toContain(`export NEW='it'\\''s'`);
    expect(job).not.toContain("SAME");
    expect(job).toContain("BASH_ARGV0='/s/x.sh'");
    expect(job).toContain("set -- 'a b'");
  });

  test("Runs that change what bash reads at start-up, or odd names, are cold-started", () => {
    const base = { PATH: "/bin" };
    expect(bashAdapter.warmEligible({ PATH: "/bin", FOO: "1" }, base)).toBe(true);
    expect(bashAdapter.warmEligible({ PATH: "/usr/bin" }, base)).toBe(true);
    for (const key of ["BASH_ENV", "SHELLOPTS", "IFS", "a-b", "BASHOPTS"]) {
      expect(bashAdapter.warmEligible({ ...base, [key]: "x" }, base)).toBe(false);
    }
  });
});
