import { describe, expect, test } from "bun:test";
import { aRuntime, renderOptions } from "../../testing/fixtures.ts";
import { renderPodTemplate } from "./pod-template.ts";
import type { RenderOptions } from "./render-options.ts";
import { warmPoolSize, withWarmPool } from "./warm-pool.ts";

const OPTS = renderOptions();

function runtimeEnv(runs: number, o: RenderOptions = OPTS, env?: { name: string; value: string }[]) {
  const rt = aRuntime("bash", { runs });
  if (env) rt.spec.template.spec.containers = [{ name: "runtime", image: "bash", env }];
  const c = renderPodTemplate(rt, o).template.spec.containers.find((x) => x.name === "runtime");
  return Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value]));
}

describe("warm pool size", () => {
  test.each([
    [1, 1],
    [2, 2],
    [4, 2],
    [8, 2],
    [16, 4],
    [32, 8],
    [64, 8],
    [1000, 8],
  ])("capacity.runs %d → %d interpreters", (runs, size) => {
    expect(warmPoolSize({ runs }, 8)).toBe(size);
  });

  test("the cap bounds it; 0 leaves the Runtime Server's default", () => {
    expect(warmPoolSize({ runs: 64 }, 2)).toBe(2);
    expect(warmPoolSize({ runs: 64 }, 0)).toBeUndefined();
    expect(withWarmPool([], { runs: 64 }, 0)).toEqual([]);
  });

  test("rendered into the runtime container, not into runtimed", () => {
    expect(runtimeEnv(64).KRT_WARM_POOL).toBe("8");
    expect(runtimeEnv(4).KRT_WARM_POOL).toBe("2");
    expect(runtimeEnv(64, { ...OPTS, warmPoolMax: 0 }).KRT_WARM_POOL).toBeUndefined();
  });

  test("the user's KRT_WARM_POOL on the runtime container wins", () => {
    const env = runtimeEnv(64, OPTS, [{ name: "KRT_WARM_POOL", value: "0" }]);
    expect(env.KRT_WARM_POOL).toBe("0");
  });
});
