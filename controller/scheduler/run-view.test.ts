import { describe, expect, test } from "bun:test";
import type { Run } from "@kruntimes/api";
import { aRun } from "../testing/fixtures.ts";
import { ManualClock } from "../util/clock.ts";
import { RunView } from "./run-view.ts";

function setup() {
  const informer = new Map<string, Run>();
  const clock = new ManualClock();
  const view = new RunView(informer, clock);
  const inform = (run: Run) => {
    informer.set("ns/a", run);
    view.observed(run);
  };
  return { informer, clock, view, inform };
}

describe("RunView", () => {
  test("shows our write until the informer delivers it", () => {
    const { view, inform } = setup();
    inform(aRun({ name: "a", rv: "1" }));
    view.beginWrite("ns/a");
    view.endWrite("ns/a", aRun({ name: "a", rv: "2" }));
    expect(view.get("ns/a")?.metadata.resourceVersion).toBe("2");
    inform(aRun({ name: "a", rv: "2" }));
    inform(aRun({ name: "a", rv: "3" }));
    expect(view.get("ns/a")?.metadata.resourceVersion).toBe("3");
  });

  test("a watch event that beats the write's response is not shadowed by it", () => {
    const { view, inform } = setup();
    inform(aRun({ name: "a", rv: "1" }));
    view.beginWrite("ns/a");
    inform(aRun({ name: "a", rv: "2" }));
    inform(aRun({ name: "a", rv: "3", termination: "Immediate" }));
    view.endWrite("ns/a", aRun({ name: "a", rv: "2" }));
    expect(view.get("ns/a")?.metadata.resourceVersion).toBe("3");
  });

  test("our copy is dropped after its TTL and on forget", () => {
    const { view, inform, clock } = setup();
    inform(aRun({ name: "a", rv: "1" }));
    view.beginWrite("ns/a");
    view.endWrite("ns/a", aRun({ name: "a", rv: "2" }));
    clock.advance(10_000);
    expect(view.get("ns/a")?.metadata.resourceVersion).toBe("1");
    view.beginWrite("ns/a");
    view.endWrite("ns/a", aRun({ name: "a", rv: "5" }));
    view.forget("ns/a");
    expect(view.get("ns/a")?.metadata.resourceVersion).toBe("1");
  });

  test("a deferred cycle is reported once when the write ends", () => {
    const { view } = setup();
    view.beginWrite("ns/a");
    expect(view.isWriting("ns/a")).toBe(true);
    view.defer("ns/a");
    expect(view.endWrite("ns/a", undefined)).toBe(true);
    expect(view.endWrite("ns/a", undefined)).toBe(false);
  });
});
