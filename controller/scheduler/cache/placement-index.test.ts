import { describe, expect, test } from "bun:test";
import { compiledAffinity } from "./affinity-terms.ts";
import { compileSelector } from "./label-selector.ts";
import { domainOf, type PlacedRun, PlacementIndex } from "./placement-index.ts";

const D1 = domainOf("ns/p1", "u1");
const D2 = domainOf("ns/p2", "u2");

function placed(
  key: string,
  domain: string,
  labels: Record<string, string>,
  anti?: PlacedRun["anti"],
): PlacedRun {
  const podKey = domain.slice(0, domain.indexOf("@"));
  return { key: `ns/${key}`, namespace: "ns", podKey, domain, labels, ...(anti ? { anti } : {}) };
}

const antiOf = (labels: Record<string, string>) =>
  compiledAffinity({
    runAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: labels }, topologyKey: "kruntimes.io/runtime-pod" },
      ],
    },
  })?.requiredAnti;

describe("PlacementIndex", () => {
  const jobA = compileSelector({ matchLabels: { job: "a" } });
  const jobAweb = compileSelector({ matchLabels: { job: "a", tier: "web" } });
  const notDb = compileSelector({ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] });

  function index() {
    const ix = new PlacementIndex();
    ix.add(placed("a1", D1, { job: "a", tier: "web" }));
    ix.add(placed("a2", D1, { job: "a", tier: "db" }));
    ix.add(placed("a3", D2, { job: "a", tier: "db" }));
    ix.add(placed("b1", D2, { job: "b" }));
    return ix;
  }

  test("counts per pod incarnation: one-label, multi-label and negative selectors", () => {
    const ix = index();
    expect([...ix.countsOn("ns", jobA, "")]).toEqual([
      [D1, 2],
      [D2, 1],
    ]);
    expect([...ix.countsOn("ns", jobAweb, "")]).toEqual([[D1, 1]]);
    expect(new Map(ix.countsOn("ns", notDb, ""))).toEqual(
      new Map([
        [D1, 1],
        [D2, 1],
      ]),
    );
    expect(ix.countOn("ns", D1, jobA, "")).toBe(2);
    expect(ix.countOn("ns", D2, jobAweb, "")).toBe(0);
  });

  test("the Run itself never counts", () => {
    const ix = index();
    expect(ix.countsOn("ns", jobA, "ns/a3").get(D2)).toBeUndefined();
    expect(ix.countsOn("ns", jobA, "ns/a3").get(D1)).toBe(2);
    expect(ix.countOn("ns", D1, jobA, "ns/a1")).toBe(1);
    // and the live counts were not touched
    expect(ix.countsOn("ns", jobA, "").get(D2)).toBe(1);
    const lone = new PlacementIndex();
    lone.add(placed("x", D1, { job: "a" }));
    expect(lone.anyMatch("ns", jobA, "ns/x")).toBe(false);
    expect(lone.anyMatch("ns", jobA, "")).toBe(true);
  });

  test("namespaces do not see each other", () => {
    const ix = index();
    expect(ix.countsOn("other", jobA, "").size).toBe(0);
    expect(ix.anyMatch("other", jobA, "")).toBe(false);
  });

  test("remove and relabel keep the counts exact", () => {
    const ix = index();
    ix.remove("ns/a2", "ns");
    expect(ix.countsOn("ns", jobA, "").get(D1)).toBe(1);
    ix.relabel("ns/a1", "ns", { job: "c" });
    expect(ix.countsOn("ns", jobA, "").get(D1)).toBeUndefined();
    expect(ix.anyMatch("ns", compileSelector({ matchLabels: { job: "c" } }), "")).toBe(true);
    ix.remove("ns/a1", "ns");
    ix.remove("ns/a3", "ns");
    ix.remove("ns/b1", "ns");
    expect(ix.size).toBe(0);
    expect(ix.anyMatch("ns", notDb, "")).toBe(false);
  });

  test("another incarnation of the same pod is another domain", () => {
    const ix = index();
    expect(ix.countOn("ns", domainOf("ns/p1", "new-uid"), jobA, "")).toBe(0);
  });

  test("refusals: placed Runs' required anti-affinity, found by the incoming Run's labels", () => {
    const ix = index();
    expect(ix.hasRefusers("ns")).toBe(false);
    ix.add(placed("db", D1, { tier: "db" }, antiOf({ tier: "db" })));
    expect(ix.hasRefusers("ns")).toBe(true);
    expect(ix.hasRefusersOn(D1)).toBe(true);
    expect(ix.hasRefusersOn(D2)).toBe(false);
    expect([...(ix.refusing("ns", { tier: "db", x: "1" }, "") ?? [])]).toEqual([D1]);
    expect(ix.refusing("ns", { tier: "web" }, "")).toBeUndefined();
    expect(ix.refusesOn(D1, { tier: "db" }, "")).toBe(true);
    expect(ix.refusesOn(D1, { tier: "db" }, "ns/db")).toBe(false);
    ix.remove("ns/db", "ns");
    expect(ix.hasRefusers("ns")).toBe(false);
    expect(ix.refusing("ns", { tier: "db" }, "")).toBeUndefined();
  });

  test("a refusal with only negative requirements is checked for every Run", () => {
    const ix = new PlacementIndex();
    const anti = compiledAffinity({
      runAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            labelSelector: { matchExpressions: [{ key: "team", operator: "DoesNotExist" }] },
            topologyKey: "kruntimes.io/runtime-pod",
          },
        ],
      },
    })?.requiredAnti;
    ix.add(placed("picky", D1, { team: "x" }, anti));
    expect([...(ix.refusing("ns", {}, "") ?? [])]).toEqual([D1]);
    expect(ix.refusing("ns", { team: "y" }, "")).toBeUndefined();
  });

  test("the listener hears placements, relabels and removals", () => {
    const ix = new PlacementIndex();
    const heard: string[] = [];
    ix.listen({ placed: (r) => heard.push(`+${r.key}`), removed: (r) => heard.push(`-${r.key}`) });
    ix.add(placed("a", D1, { job: "a" }));
    ix.relabel("ns/a", "ns", { job: "b" });
    ix.remove("ns/a", "ns");
    expect(heard).toEqual(["+ns/a", "+ns/a", "-ns/a"]);
  });
});
