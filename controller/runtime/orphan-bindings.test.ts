import { describe, expect, test } from "bun:test";
import { orphanBindings } from "./orphan-bindings.ts";

const b = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels } });
const ours = (ns: string, rt: string) => ({
  "app.kubernetes.io/managed-by": "kruntimes",
  "kruntimes.io/runtime": rt,
  "kruntimes.io/namespace": ns,
});

describe("orphanBindings", () => {
  test("only our Runtime bindings whose Runtime is gone", () => {
    const names = orphanBindings(
      [
        b("live", ours("a", "bash")),
        b("gone", ours("a", "python")),
        b("maintainer", { "app.kubernetes.io/managed-by": "kruntimes", "kruntimes.io/namespace": "a" }),
        b("foreign", { "kruntimes.io/runtime": "python", "kruntimes.io/namespace": "a" }),
      ],
      (key) => key === "a/bash",
    );
    expect(names).toEqual(["gone"]);
  });
});
