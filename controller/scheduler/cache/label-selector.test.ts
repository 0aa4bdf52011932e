import { describe, expect, test } from "bun:test";
import { compileSelector, matches, sameLabels } from "./label-selector.ts";

describe("compileSelector", () => {
  const cases: [string, Parameters<typeof compileSelector>[0], Record<string, string>, boolean][] = [
    [
      "matchLabels: all present",
      { matchLabels: { job: "a", team: "x" } },
      { job: "a", team: "x", z: "1" },
      true,
    ],
    ["matchLabels: one differs", { matchLabels: { job: "a", team: "x" } }, { job: "a", team: "y" }, false],
    [
      "In",
      { matchExpressions: [{ key: "tier", operator: "In", values: ["web", "db"] }] },
      { tier: "db" },
      true,
    ],
    ["In: absent key", { matchExpressions: [{ key: "tier", operator: "In", values: ["web"] }] }, {}, false],
    [
      "NotIn: absent key matches",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] },
      {},
      true,
    ],
    [
      "NotIn: listed value",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] },
      { tier: "db" },
      false,
    ],
    ["Exists", { matchExpressions: [{ key: "gpu", operator: "Exists" }] }, { gpu: "" }, true],
    ["DoesNotExist", { matchExpressions: [{ key: "gpu", operator: "DoesNotExist" }] }, { gpu: "1" }, false],
    [
      "labels and expressions together",
      { matchLabels: { job: "a" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] },
      { job: "a", tier: "web" },
      true,
    ],
  ];
  for (const [name, sel, labels, want] of cases) {
    test(name, () => expect(matches(compileSelector(sel), labels)).toBe(want));
  }

  test("text is kubectl-style and bounded", () => {
    const s = compileSelector({
      matchLabels: { job: "a" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["web", "db"] },
        { key: "x", operator: "NotIn", values: ["1"] },
        { key: "gpu", operator: "Exists" },
        { key: "cpu", operator: "DoesNotExist" },
      ],
    });
    expect(s.text).toBe("job=a,tier in (db,web),x notin (1),gpu,!cpu");
    const long = compileSelector({
      matchLabels: { k: "v".repeat(63), l: "w".repeat(63), m: "x".repeat(63) },
    });
    expect(long.text.length).toBe(120);
    expect(long.text.endsWith("…")).toBe(true);
  });

  test("postings: one list per positive requirement; one label is simple", () => {
    expect(compileSelector({ matchLabels: { job: "a" } })).toMatchObject({
      postings: [["job=a"]],
      simple: "job=a",
    });
    expect(compileSelector({ matchExpressions: [{ key: "gpu", operator: "Exists" }] }).simple).toBe("gpu");
    const s = compileSelector({
      matchLabels: { job: "a" },
      matchExpressions: [
        { key: "tier", operator: "In", values: ["web", "db"] },
        { key: "x", operator: "NotIn", values: ["1"] },
      ],
    });
    expect(s.postings).toEqual([["job=a"], ["tier=db", "tier=web"]]);
    expect(s.simple).toBeUndefined();
    expect(compileSelector({ matchExpressions: [{ key: "x", operator: "DoesNotExist" }] }).postings).toEqual(
      [],
    );
  });

  test("sameLabels compares content", () => {
    expect(sameLabels({ a: "1" }, { a: "1" })).toBe(true);
    expect(sameLabels({ a: "1" }, { a: "2" })).toBe(false);
    expect(sameLabels({ a: "1" }, { a: "1", b: "" })).toBe(false);
  });
});
