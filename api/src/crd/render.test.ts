import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { REASONS } from "../reasons.ts";
import { crds } from "./definitions.ts";
import { walkSchema } from "./openapi.ts";
import { boundsOf, REFERENCE_HEADER, renderReference, typeOf } from "./reference.ts";
import { generatedFiles, renderCrdYaml, YAML_HEADER } from "./render.ts";

const repoRoot = join(import.meta.dir, "..", "..", "..");

describe("generated files", () => {
  test("the CRD YAML parses back to the exported objects", () => {
    for (const crd of crds) {
      const text = renderCrdYaml(crd);
      expect(text.startsWith(YAML_HEADER)).toBe(true);
      expect(YAML.parse(text)).toEqual(crd);
    }
  });

  test("the committed files are what the generator writes (else: bun scripts/gen-crds.ts)", () => {
    for (const [file, text] of generatedFiles(crds)) {
      expect([file, readFileSync(join(repoRoot, file), "utf8") === text]).toEqual([file, true]);
    }
  });
});

describe("API reference", () => {
  const md = renderReference(crds);

  test("has a row for every spec and status field and a line for every reason", () => {
    expect(md.startsWith(REFERENCE_HEADER)).toBe(true);
    for (const crd of crds) {
      const root = crd.spec.versions[0]!.schema.openAPIV3Schema;
      for (const top of ["spec", "status"] as const) {
        const node = root.properties![top];
        if (!node) continue;
        for (const v of walkSchema(node, top)) {
          if (v.path !== top) expect(md).toContain(`| \`${v.path}\` |`);
        }
      }
    }
    for (const r of REASONS) expect(md).toContain(`| \`${r}\` |`);
  });

  test("names types and bounds the way a reader expects", () => {
    expect(typeOf({ type: "array", items: { type: "string" } })).toBe("[]string");
    expect(typeOf({ type: "object", additionalProperties: { type: "integer", format: "int64" } })).toBe(
      "map[string]integer (int64)",
    );
    expect(typeOf({ "x-kubernetes-preserve-unknown-fields": true, type: "object" })).toBe("object (open)");
    expect(boundsOf({ type: "string", minLength: 1, maxLength: 63, pattern: "^a|b$" })).toBe(
      "length 1..63; pattern `^a|b$`",
    );
    expect(boundsOf({ type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER })).toBe("≥ 0");
    expect(
      boundsOf({
        type: "array",
        maxItems: 8,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    ).toBe("items ≤ 8; unique by type");
  });

  test("escapes pipes inside table cells", () => {
    const durationRow = md.split("\n").find((l) => l.startsWith("| `spec.timeout` |"));
    expect(durationRow).toContain("(ns\\|us\\|ms\\|s\\|m\\|h)");
  });
});
