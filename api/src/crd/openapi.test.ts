import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { toOpenApi, walkSchema } from "./openapi.ts";

describe("toOpenApi", () => {
  test("drops TypeBox's markers and writes keywords in canonical order", () => {
    const out = toOpenApi(
      Type.Object(
        {
          a: Type.Optional(Type.String({ maxLength: 3, description: "A." })),
          b: Type.Integer({ description: "B." }),
        },
        { description: "Root." },
      ),
    );
    expect(Object.getOwnPropertySymbols(out)).toEqual([]);
    expect(Object.keys(out)).toEqual(["description", "type", "required", "properties"]);
    expect(Object.keys(out.properties!.a!)).toEqual(["description", "type", "maxLength"]);
    expect(out.required).toEqual(["b"]);
  });

  test("refuses unions (anyOf), which are not structural", () => {
    expect(() => toOpenApi(Type.Object({ u: Type.Union([Type.Literal("a"), Type.Literal("b")]) }))).toThrow(
      /u: keyword "anyOf" is not allowed/,
    );
  });

  test("refuses records (patternProperties) and nodes without a type", () => {
    expect(() => toOpenApi(Type.Record(Type.String(), Type.Integer()))).toThrow(/patternProperties/);
    expect(() => toOpenApi(Type.Object({ x: Type.Unknown() }))).toThrow(/x: every node .* needs a type/);
  });

  test("walks properties, list items and map values with their paths", () => {
    const schema = toOpenApi(
      Type.Object({
        list: Type.Array(Type.Object({ n: Type.String() })),
        map: Type.Unsafe({ type: "object", additionalProperties: { type: "integer" } }),
      }),
    );
    const visits = [...walkSchema(schema, "spec")].map((v) => [v.path, v.required]);
    expect(visits).toEqual([
      ["spec", true],
      ["spec.list", true],
      ["spec.list[]", true],
      ["spec.list[].n", true],
      ["spec.map", true],
      ["spec.map{}", true],
    ]);
  });
});
