import { describe, expect, test } from "bun:test";
import { KubeError } from "./errors.ts";
import { classifyWriteError } from "./write-errors.ts";

const err = (code: number, causes?: { field: string }[]) =>
  new KubeError("PATCH", "/x", code, { message: "m", details: causes ? { causes } : {} });

describe("classifyWriteError", () => {
  const cases: [string, unknown, string][] = [
    ["failed test op (422, no causes)", err(422), "fenced"],
    ["conflict", err(409), "fenced"],
    ["validation error (422 with causes)", err(422, [{ field: "status.phase" }]), "rejected"],
    ["not found", err(404), "gone"],
    ["forbidden", err(403), "rejected"],
    ["server error", err(503), "ambiguous"],
    ["throttled", err(429), "ambiguous"],
    ["network error", new TypeError("fetch failed"), "ambiguous"],
  ];
  for (const [name, e, want] of cases) test(name, () => expect(classifyWriteError(e)).toBe(want as "fenced"));
});
