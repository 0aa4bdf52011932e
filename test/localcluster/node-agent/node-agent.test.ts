/** Unit tests of the node agent's pure logic (the integration suite covers it on a real cluster). */
import { describe, expect, test } from "bun:test";
import { containerArgv } from "./env/container-env.ts";
import { expand, lookupIn } from "./env/expand.ts";
import { ImageMap } from "./images/image-map.ts";
import { formatRecord, parseRecord } from "./logs/cri-log-format.ts";
import { parseRecords, selectRecords } from "./logs/cri-log-reader.ts";
import { IpAllocator } from "./network/ip-allocator.ts";
import { ProbeState, probeTiming } from "./probes/probe-state.ts";
import { planMounts } from "./runtime/mount-plan.ts";

describe("$(VAR) expansion", () => {
  const look = lookupIn({ A: "1", B: "two" });
  test.each([
    ["$(A)-$(B)", "1-two"],
    ["$(MISSING)", "$(MISSING)"],
    ["$$(A)", "$(A)"],
    ["cost $5", "cost $5"],
    ["$(A", "$(A"],
    ["", ""],
  ])("%p → %p", (input, want) => {
    expect(expand(input, look)).toBe(want);
  });
});

describe("container argv", () => {
  const image = { entrypoint: ["/bin/ep"], cmd: ["default"] };
  const vars = new Map([["X", "y"]]);
  test("image entrypoint and cmd when the container sets neither", () => {
    expect(containerArgv(image, { name: "c" }, vars)).toEqual(["/bin/ep", "default"]);
  });
  test("args replace cmd only", () => {
    expect(containerArgv(image, { name: "c", args: ["$(X)"] }, vars)).toEqual(["/bin/ep", "y"]);
  });
  test("command replaces entrypoint and drops cmd", () => {
    expect(containerArgv(image, { name: "c", command: ["sh"] }, vars)).toEqual(["sh"]);
  });
});

describe("image map", () => {
  const map = new ImageMap("images.yaml", "/repo", {
    images: {
      busybox: { cmd: ["sh"] },
      "kruntimes.local/app:v2": { entrypoint: ["bun", "v2.ts"], workingDir: "sub" },
      "kruntimes.local/app": { entrypoint: ["bun", "app.ts"] },
    },
  });
  test("docker.io/library names match the short key", () => {
    expect(map.resolve("docker.io/library/busybox:1.36")?.key).toBe("busybox");
  });
  test("a tagged key wins for its tag; the untagged key serves the rest", () => {
    expect(map.resolve("kruntimes.local/app:v2")?.workingDir).toBe("/repo/sub");
    expect(map.resolve("kruntimes.local/app:v3")?.entrypoint).toEqual(["bun", "app.ts"]);
  });
  test("unknown images resolve to nothing", () => {
    expect(map.resolve("ghcr.io/nobody/else")).toBeUndefined();
  });
});

describe("pod IP allocation", () => {
  test("one stable address per owner, released addresses are reused, exhaustion is an error", () => {
    const ips = new IpAllocator("127.1.0.0/30");
    const a = ips.allocate("a");
    expect(ips.allocate("a")).toBe(a);
    const b = ips.allocate("b");
    expect(b).not.toBe(a);
    ips.release("a");
    expect(ips.allocate("c")).toBeDefined();
    expect(ips.contains("127.2.0.1")).toBe(false);
  });
});

describe("probe thresholds", () => {
  test("readiness needs successThreshold successes and failureThreshold failures in a row", () => {
    const s = new ProbeState(
      "readiness",
      probeTiming("readiness", { successThreshold: 2, failureThreshold: 2 }),
    );
    expect(s.result).toBe("failure");
    expect(s.observe(true)).toBe(false);
    expect(s.observe(true)).toBe(true);
    expect(s.result).toBe("success");
    expect(s.observe(false)).toBe(false);
    expect(s.observe(true)).toBe(false);
    expect(s.observe(false)).toBe(false);
    expect(s.observe(false)).toBe(true);
    expect(s.result).toBe("failure");
  });
  test("a reported liveness failure holds until the next container attempt", () => {
    const s = new ProbeState("liveness", probeTiming("liveness", { failureThreshold: 1 }));
    expect(s.observe(false)).toBe(true);
    expect(s.onHold).toBe(true);
    expect(s.observe(true)).toBe(false);
  });
});

describe("CRI log lines", () => {
  test("format and parse round-trip; tail selects the last lines", () => {
    const text = ["a", "b", "c"]
      .map((c, i) => formatRecord("stdout", c, false, 1_700_000_000_000 + i))
      .join("");
    const { records, consumed } = parseRecords(`${text}2026-01-01T00:00:00Z stdout F incomplete`);
    expect(consumed).toBe(text.length);
    expect(records.map((r) => r.content)).toEqual(["a", "b", "c"]);
    expect(selectRecords(records, { tailLines: 2 }).map((r) => r.content)).toEqual(["b", "c"]);
    expect(parseRecord("garbage")).toBeUndefined();
  });
});

describe("mount plan", () => {
  const vols = new Map([["data", { dir: "/state/v/data", readOnly: false }]]);
  test("subPath stays inside its volume; parents mount before children", () => {
    const binds = planMounts(
      [
        { name: "data", mountPath: "/a/b/c", subPath: "x" },
        { name: "data", mountPath: "/a", readOnly: true },
      ],
      vols,
      new Map(),
    );
    expect(binds.map((b) => b.target)).toEqual(["/a", "/a/b/c"]);
    expect(binds[0]!.readOnly).toBe(true);
    expect(binds[1]!.source).toBe("/state/v/data/x");
    expect(() => planMounts([{ name: "data", mountPath: "/x", subPath: "../etc" }], vols, new Map())).toThrow(
      /without/,
    );
    expect(() => planMounts([{ name: "nope", mountPath: "/x" }], vols, new Map())).toThrow(/no volume/);
  });
});
