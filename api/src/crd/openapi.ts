/**
 * TypeBox schema → the OpenAPI v3 structural schema a CRD carries. TypeBox's own markers are
 * symbol-keyed, so a JSON round trip leaves plain JSON Schema; `toOpenApi` then refuses any keyword
 * a structural CRD schema cannot hold, so a mistake fails at generation, not at install.
 */
import type { TSchema } from "@sinclair/typebox";

/** One node of an OpenAPI schema, as the CRD holds it. */
export interface OpenApiSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  format?: string;
  default?: unknown;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema;
  items?: OpenApiSchema;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-validations"?: { rule: string; message: string; fieldPath?: string; reason?: string }[];
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: string;
}

/** The keywords a structural CRD schema may use here, in the order they are written out. */
const KEYWORD_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
  "required",
  "items",
  "additionalProperties",
  "properties",
] as const;
const ALLOWED_KEYWORDS = new Set<string>(KEYWORD_ORDER);

/** A node and where it sits: `spec.env[].name`, `spec.capacity{}`. */
export interface SchemaVisit {
  path: string;
  node: OpenApiSchema;
  /** Whether the parent object lists this property in `required`. */
  required: boolean;
}

/** Every node below (and including) `root`, depth first, properties in declaration order. */
export function* walkSchema(root: OpenApiSchema, path = "", required = true): Generator<SchemaVisit> {
  yield { path, node: root, required };
  for (const [name, child] of Object.entries(root.properties ?? {})) {
    yield* walkSchema(child, path ? `${path}.${name}` : name, root.required?.includes(name) ?? false);
  }
  if (root.items) yield* walkSchema(root.items, `${path}[]`, true);
  if (root.additionalProperties) yield* walkSchema(root.additionalProperties, `${path}{}`, true);
}

/** Rebuilds every node with its keywords in `KEYWORD_ORDER`, refusing any other keyword. */
function canonical(node: Record<string, unknown>, path: string): OpenApiSchema {
  for (const key of Object.keys(node)) {
    if (!ALLOWED_KEYWORDS.has(key)) {
      throw new Error(`${path || "<root>"}: keyword "${key}" is not allowed in a structural CRD schema`);
    }
  }
  if (!node.type && !node["x-kubernetes-preserve-unknown-fields"]) {
    throw new Error(`${path || "<root>"}: every node of a structural schema needs a type`);
  }
  const out: Record<string, unknown> = {};
  for (const key of KEYWORD_ORDER) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === "items" || key === "additionalProperties") {
      out[key] = canonical(value as Record<string, unknown>, `${path}${key === "items" ? "[]" : "{}"}`);
    } else if (key === "properties") {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, Record<string, unknown>>).map(([name, child]) => [
          name,
          canonical(child, path ? `${path}.${name}` : name),
        ]),
      );
    } else {
      out[key] = value;
    }
  }
  return out as OpenApiSchema;
}

/** The plain JSON Schema of a TypeBox schema (its markers are symbol keys, dropped by JSON). */
export function toOpenApi(schema: TSchema): OpenApiSchema {
  return canonical(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>, "");
}
