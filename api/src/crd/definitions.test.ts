import { describe, expect, test } from "bun:test";
import { GROUP, RUNTIME_CONTAINER, RUNTIMED_CONTAINER, VERSION } from "../constants.ts";
import { REASONS, RETRYABLE_REASONS, RUN_PHASES, WAITING_REASONS } from "../reasons.ts";
import { crds, runCrd, runtimeCrd } from "./definitions.ts";
import { type OpenApiSchema, walkSchema } from "./openapi.ts";

const rootOf = (crd: typeof runCrd) => crd.spec.versions[0]!.schema.openAPIV3Schema;
const nodeAt = (root: OpenApiSchema, dotted: string): OpenApiSchema | undefined =>
  [...walkSchema(root)].find((v) => v.path === dotted)?.node;
/** Follows a printer-column path: a segment is a property, or a key of a map. */
const resolve = (root: OpenApiSchema, dotted: string): OpenApiSchema | undefined =>
  dotted
    .split(".")
    .reduce<OpenApiSchema | undefined>((n, seg) => n?.properties?.[seg] ?? n?.additionalProperties, root);
const rulesAt = (root: OpenApiSchema, dotted: string) =>
  nodeAt(root, dotted)?.["x-kubernetes-validations"] ?? [];

/** Whether `value` satisfies the structural parts of `node` we use (enough to catch a bad default). */
function conforms(node: OpenApiSchema, value: unknown): boolean {
  if (node.enum && !node.enum.includes(value)) return false;
  switch (node.type) {
    case "string":
      return (
        typeof value === "string" &&
        value.length <= (node.maxLength ?? Infinity) &&
        value.length >= (node.minLength ?? 0) &&
        (!node.pattern || new RegExp(node.pattern).test(value))
      );
    case "integer":
    case "number":
      return (
        typeof value === "number" &&
        (node.type === "number" || Number.isInteger(value)) &&
        value >= (node.minimum ?? -Infinity) &&
        value <= (node.maximum ?? Infinity)
      );
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return (
        Array.isArray(value) &&
        value.length <= (node.maxItems ?? Infinity) &&
        value.every((v) => conforms(node.items!, v))
      );
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
      const entries = Object.entries(value);
      if (entries.length > (node.maxProperties ?? Infinity) || entries.length < (node.minProperties ?? 0))
        return false;
      return entries.every(([k, v]) => {
        const child = node.properties?.[k] ?? node.additionalProperties;
        return child ? conforms(child, v) : node["x-kubernetes-preserve-unknown-fields"] === true;
      });
    }
    default:
      return false;
  }
}

describe.each(crds.map((crd) => [crd.spec.names.kind, crd] as const))("%s CRD", (_kind, crd) => {
  const root = rootOf(crd);
  const nodes = [...walkSchema(root)];

  test("is kruntimes.io/v1alpha1, namespaced, with a status subresource (kinds with a status) and the kruntimes category", () => {
    expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${GROUP}`);
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([[VERSION, true, true]]);
    const hasStatus = root.properties?.status !== undefined;
    expect(crd.spec.versions[0]!.subresources.status).toEqual(hasStatus ? {} : undefined);
    // Only the definitions nobody reconciles go without a status.
    expect(hasStatus).toBe(!["Workflow", "Action"].includes(crd.spec.names.kind));
    expect(crd.spec.names.categories).toEqual(["kruntimes"]);
  });

  test("bounds every string, list and map (the CEL cost estimator needs them)", () => {
    const unbounded = nodes
      .filter(({ node }) => {
        if (node.type === "string") return node.maxLength === undefined && node.enum === undefined;
        if (node.type === "array") return node.maxItems === undefined;
        if (node.type === "object" && node.additionalProperties) return node.maxProperties === undefined;
        return false;
      })
      .map((v) => v.path);
    expect(unbounded).toEqual([]);
  });

  test("bounds every integer from below and above", () => {
    const open = nodes
      .filter(
        ({ node }) => node.type === "integer" && (node.minimum === undefined || node.maximum === undefined),
      )
      .map((v) => v.path);
    expect(open).toEqual([]);
  });

  test("describes every field", () => {
    const undescribed = nodes.filter((v) => v.path !== "metadata" && !v.node.description).map((v) => v.path);
    expect(undescribed).toEqual([]);
  });

  test("has defaults that satisfy their own schema", () => {
    const withDefaults = nodes.filter((v) => v.node.default !== undefined);
    expect(withDefaults.length).toBeGreaterThan(0);
    for (const v of withDefaults) expect([v.path, conforms(v.node, v.node.default)]).toEqual([v.path, true]);
  });

  test("gives every CEL rule a message, and map-type lists their keys", () => {
    for (const v of nodes) {
      for (const r of v.node["x-kubernetes-validations"] ?? []) expect(r.message.length).toBeGreaterThan(10);
      if (v.node["x-kubernetes-list-type"] === "map") {
        for (const key of v.node["x-kubernetes-list-map-keys"] ?? [])
          expect(v.node.items?.required).toContain(key);
      }
    }
  });

  test("printer columns point at fields of the schema", () => {
    for (const c of crd.spec.versions[0]!.additionalPrinterColumns) {
      const dotted = c.jsonPath.slice(1);
      if (dotted.startsWith("metadata.")) continue;
      expect([c.name, resolve(root, dotted)?.type]).toEqual([c.name, c.type === "date" ? "string" : c.type]);
    }
  });
});

describe("Runtime schema", () => {
  const root = rootOf(runtimeCrd);

  test("requires a container named runtime and reserves runtimed, by CEL on the pod spec", () => {
    const rules = rulesAt(root, "spec.template.spec").map((r) => r.rule);
    expect(rules).toContain(`self.containers.exists(c, c.name == '${RUNTIME_CONTAINER}')`);
    expect(rules).toContain(`!self.containers.exists(c, c.name == '${RUNTIMED_CONTAINER}')`);
    expect(nodeAt(root, "spec.template.spec")?.["x-kubernetes-preserve-unknown-fields"]).toBe(true);
  });

  test("keeps the workspace volume source open, with exactly one volume type, default emptyDir", () => {
    const ws = nodeAt(root, "spec.workspace")!;
    expect(ws["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    expect([ws.minProperties, ws.maxProperties]).toEqual([1, 1]);
    expect(ws.default).toEqual({ emptyDir: {} });
  });

  test("has short name rt, columns DESIRED READY AVAILABLE CAPACITY PENDING AGE, and a scale subresource", () => {
    expect(runtimeCrd.spec.names.shortNames).toEqual(["rt"]);
    const columns = runtimeCrd.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name.toUpperCase());
    expect(columns).toEqual(["DESIRED", "READY", "AVAILABLE", "CAPACITY", "PENDING", "AGE"]);
    expect(runtimeCrd.spec.versions[0]!.subresources.scale?.specReplicasPath).toBe(".spec.replicas");
  });
});

describe("Run schema", () => {
  const root = rootOf(runCrd);
  const spec = nodeAt(root, "spec")!;

  test("makes every spec field that affects execution immutable; only TTL and termination may change", () => {
    const mutable = ["ttlSecondsAfterFinished", "termination"];
    const specRules = spec["x-kubernetes-validations"] ?? [];
    for (const field of Object.keys(spec.properties!)) {
      const own = rulesAt(root, `spec.${field}`).some((r) => r.rule === "self == oldSelf");
      const viaSpec = specRules.some(
        (r) => r.fieldPath === `.${field}` && r.rule.includes(`self.${field} == oldSelf.${field}`),
      );
      expect([field, own || viaSpec]).toEqual([field, !mutable.includes(field)]);
    }
  });

  test("termination moves forward only and cannot be removed", () => {
    expect(rulesAt(root, "spec.termination.mode").map((r) => r.rule)).toEqual([
      "self == oldSelf || (oldSelf == 'Drain' && self == 'Immediate')",
    ]);
    expect(
      spec["x-kubernetes-validations"]?.some(
        (r) => r.rule === "!has(oldSelf.termination) || has(self.termination)",
      ),
    ).toBe(true);
  });

  test("rejects entrypoint and args next to inline, with a message that says what to change", () => {
    const rule = spec["x-kubernetes-validations"]?.find((r) =>
      r.message.startsWith("spec.source.inline is a standalone"),
    );
    expect(rule?.rule).toContain("!has(self.mode.task.entrypoint) && !has(self.mode.task.args)");
    expect(rule?.message).toContain("remove spec.mode.task.entrypoint and spec.mode.task.args");
  });

  test("enums come from the closed sets", () => {
    expect(nodeAt(root, "status.phase")?.enum).toEqual(RUN_PHASES);
    expect(nodeAt(root, "status.reason")?.enum).toEqual(REASONS);
    expect(nodeAt(root, "status.waitingReason")?.enum).toEqual([...WAITING_REASONS]);
    expect(nodeAt(root, "spec.retryPolicy.retryOn[]")?.enum).toEqual([...RETRYABLE_REASONS]);
  });

  test("timing is int64 microseconds", () => {
    for (const f of [
      "createdMicros",
      "scheduledMicros",
      "startedMicros",
      "finishedMicros",
      "reportedMicros",
    ]) {
      const node = nodeAt(root, `status.timing.${f}`);
      expect([f, node?.type, node?.format]).toEqual([f, "integer", "int64"]);
    }
  });

  test("has short name krun and columns RUNTIME PHASE POD ATTEMPT EXIT (REASON wide) AGE", () => {
    expect(runCrd.spec.names.shortNames).toEqual(["krun"]);
    const columns = runCrd.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name.toUpperCase());
    expect(columns).toEqual(["RUNTIME", "PHASE", "POD", "ATTEMPT", "EXIT", "REASON", "AGE"]);
  });
});
