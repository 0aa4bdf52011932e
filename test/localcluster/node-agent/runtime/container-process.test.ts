import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseRecords } from "../logs/cri-log-reader.ts";
import { ContainerProcess, findHostTools } from "./container-process.ts";
import { planMounts } from "./mount-plan.ts";
import { ProcessRegistry } from "./process-registry.ts";

// Real processes in real (private) mount and UTS namespaces: the agent's unit of isolation.
const root = mkdtempSync("/tmp/krt-container-process-");
const tools = findHostTools(process.env.PATH ?? "/usr/bin:/bin");
const registry = new ProcessRegistry(join(root, "state"));
let n = 0;

function launch(argv: string[], binds: ReturnType<typeof planMounts> = [], workingDir = "/") {
  n++;
  return new ContainerProcess(
    {
      argv,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      wrapper: {
        binds,
        hostsFile: join(root, "hosts"),
        hostname: `pod-${n}`,
        workingDir,
        startErrorFile: join(root, `err-${n}`),
      },
      logFile: join(root, "logs", `${n}.log`),
      podKey: "ns/p",
      container: "c",
    },
    tools,
    registry,
  );
}
const logOf = (p: ContainerProcess) =>
  parseRecords(readFileSync(p.logFile, "utf8")).records.map((r) => r.content);

/** Polls (up to 30 s) for a state a real process reaches in its own time. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out after 30000ms");
    await Bun.sleep(10);
  }
}

describe("mount plan", () => {
  const vols = new Map([["data", { dir: "/state/v/data", readOnly: false }]]);
  test("subPath stays inside its volume; parents mount before children", () => {
    const binds = planMounts(
      [
        { name: "data", mountPath: "/a/b/c", subPath: "x" },
        { name: "data", mountPath: "/a/", readOnly: true },
        { name: "data", mountPath: "/e", subPathExpr: "$(POD)" },
      ],
      vols,
      new Map([["POD", "p1"]]),
    );
    expect(binds.map((b) => [b.target, b.source, b.readOnly])).toEqual([
      ["/a", "/state/v/data", true],
      ["/e", "/state/v/data/p1", false],
      ["/a/b/c", "/state/v/data/x", false],
    ]);
    expect(() => planMounts([{ name: "data", mountPath: "/x", subPath: "../etc" }], vols, new Map())).toThrow(
      /without/,
    );
    expect(() => planMounts([{ name: "nope", mountPath: "/x" }], vols, new Map())).toThrow(/no volume/);
  });
});

describe("container process", () => {
  writeFileSync(join(root, "hosts"), "127.1.0.9\tpod\n");
  test("binds (read-only too) and /etc/hosts are private to the process; hostname is the pod's", async () => {
    const vol = join(root, "vol");
    mkdirSync(vol);
    writeFileSync(join(vol, "f"), "data\n");
    const target = join(root, "mnt", "here");
    const p = launch(
      [
        "sh",
        "-c",
        `hostname; cat /etc/hosts; cat ${target}/f; touch ${target}/g 2>/dev/null || echo ro; pwd`,
      ],
      [{ source: vol, target, readOnly: true }],
      join(root, "wd"),
    );
    const exit = await p.exited;
    expect(exit.exitCode).toBe(0);
    expect(logOf(p)).toEqual(["pod-1", "127.1.0.9\tpod", "data", "ro", join(root, "wd")]);
    // The mount point exists on the host (created), but nothing is mounted there outside.
    expect(existsSync(join(target, "f"))).toBe(false);
  });
  test("exit codes and signals as a runtime reports them; the group is stopped", async () => {
    expect((await launch(["sh", "-c", "exit 3"]).exited).exitCode).toBe(3);
    const p = launch(["sh", "-c", "echo up; sleep 30 & sleep 31"]);
    await until(() => existsSync(p.logFile) && logOf(p).includes("up"));
    const exit = await p.stop(5000);
    expect(exit).toMatchObject({ exitCode: 143, signal: 15 });
    // Stopped only once it ignores TERM (a stop before the trap would be an ordinary TERM exit).
    const stubborn = launch(["sh", "-c", "trap '' TERM; echo trapped; while :; do sleep 0.05; done"]);
    await until(() => existsSync(stubborn.logFile) && logOf(stubborn).includes("trapped"));
    const t0 = Date.now();
    expect((await stubborn.stop(300)).exitCode).toBe(137);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  }, 60_000);
  test("a command that cannot be found is a StartError, not the program's exit", async () => {
    const exit = await launch(["/no/such/program"]).exited;
    expect(exit.exitCode).toBe(128);
    expect(exit.startError).toBe('exec: "/no/such/program": executable file not found in $PATH');
  });
});
