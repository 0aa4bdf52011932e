import { describe, expect, test } from "bun:test";
import type { Runtime } from "@kruntimes/api";
import { runtimeColumns } from "./columns.ts";

const base = {
  apiVersion: "kruntimes.io/v1alpha1",
  kind: "Runtime",
  metadata: { name: "pool" },
  spec: { replicas: 2, template: { spec: { containers: [{ name: "runtime", image: "img" }] } } },
} as Runtime;
const cell = (r: Runtime, header: string) =>
  runtimeColumns(0, false)
    .find((c) => c.header === header)
    ?.value(r);

describe("runtime columns", () => {
  test("DESIRED is spec.replicas, or the autoscaler's count when autoscaled", () => {
    expect(cell(base, "DESIRED")).toBe("2");
    const auto = {
      ...base,
      spec: { ...base.spec, autoscaling: { minReplicas: 0, maxReplicas: 5 } },
      status: { autoscaling: { desiredReplicas: 3 } },
    } as Runtime;
    expect(cell(auto, "DESIRED")).toBe("3");
    expect(cell(auto, "AUTOSCALE")).toBe("0-5");
    expect(cell(base, "AUTOSCALE")).toBe("-");
  });

  test("PENDING is status.pendingRuns, 0 before the controller wrote it", () => {
    expect(cell(base, "PENDING")).toBe("0");
    expect(cell({ ...base, status: { pendingRuns: 12 } } as Runtime, "PENDING")).toBe("12");
  });
});
