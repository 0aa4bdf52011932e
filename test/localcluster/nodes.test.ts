import { describe, expect, test } from "bun:test";
import { parseCidr } from "./node-agent/network/ip-allocator.ts";
import { nodePodRange, nodesFlag, parseNodeCount, planNodes } from "./nodes.ts";

describe("local cluster nodes", () => {
  test("node count: unset is 1, 1..3 accepted, anything else refused with the allowed values", () => {
    expect(parseNodeCount(undefined)).toBe(1);
    expect(parseNodeCount("")).toBe(1);
    expect(parseNodeCount("3")).toBe(3);
    for (const bad of ["0", "4", "1.5", "two", "-1"]) {
      expect(() => parseNodeCount(bad)).toThrow("use 1, 2 or 3");
    }
  });

  test("--nodes N and --nodes=N", () => {
    expect(nodesFlag(["up", "--nodes", "2"])).toBe("2");
    expect(nodesFlag(["up", "--nodes=3"])).toBe("3");
    expect(nodesFlag(["up"])).toBeUndefined();
    expect(nodesFlag(["up", "--nodes"])).toBe("");
  });

  test("one node keeps the whole range; more split it into disjoint quarters inside it", () => {
    expect(nodePodRange("127.1.0.0/16", 1, 1)).toBe("127.1.0.0/16");
    const parts = [1, 2, 3].map((i) => nodePodRange("127.3.0.0/16", i, 3));
    expect(parts).toEqual(["127.3.0.0/18", "127.3.64.0/18", "127.3.128.0/18"]);
    const whole = parseCidr("127.3.0.0/16");
    const ranges = parts.map(parseCidr);
    for (const r of ranges) {
      expect(r.first).toBeGreaterThanOrEqual(whole.first);
      expect(r.last).toBeLessThanOrEqual(whole.last);
    }
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.first).toBeGreaterThan(ranges[i - 1]!.last);
    expect(() => nodePodRange("127.1.0.0/30", 1, 2)).toThrow("too small");
  });

  test("node 1 keeps the one-node names; others are suffixed", () => {
    const nodes = planNodes({
      baseName: "krt-local-node",
      count: 2,
      podIpRange: "127.1.0.0/16",
      clusterDir: "/c",
    });
    expect(nodes.map((n) => [n.name, n.component, n.stateDir, n.podIpRange])).toEqual([
      ["krt-local-node", "node-agent", "/c/node", "127.1.0.0/18"],
      ["krt-local-node-2", "node-agent-2", "/c/node-2", "127.1.64.0/18"],
    ]);
  });
});
