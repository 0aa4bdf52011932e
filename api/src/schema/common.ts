/** Schema pieces both kinds use: durations, names, metav1.Condition, logical resource maps. */
import type { Static } from "@sinclair/typebox";
import { Limits } from "../constants.ts";
import { cel, celString, Int32, Int64, List, MapOf, Obj, Str, StringEnum, Type } from "./kube.ts";

/** Go duration syntax restricted to what a timeout needs: `30s`, `1m30s`, `1.5h`, `250ms`. */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$";

/** A positive Go-style duration string; CEL's `duration()` only runs once the pattern matched. */
export function Duration(description: string, extra: { default?: string } = {}) {
  return Str(Limits.durationLength, {
    ...extra,
    description,
    pattern: DURATION_PATTERN,
    "x-kubernetes-validations": [
      cel(
        `!self.matches(${celString(DURATION_PATTERN)}) || duration(self) > duration('0s')`,
        "must be a positive duration such as 30s, 5m or 1h30m",
      ),
    ],
  });
}

/** A DNS-1123 subdomain name of another object in the same namespace. */
export function ObjectName(description: string) {
  return Str(Limits.nameLength, {
    description,
    minLength: 1,
    pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
  });
}

/** The name of a logical resource: `runs`, `gpu`, `licenses`. */
export const RESOURCE_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/** A map of logical resource name → non-negative integer, with `runs` at least 1 when present. */
export function ResourceMap(description: string, extra: { default?: Record<string, number> } = {}) {
  return MapOf(
    Int64({
      description: "Amount of the logical resource.",
      minimum: 0,
      maximum: Limits.resourceQuantity,
    }),
    Limits.resourceCount,
    {
      ...extra,
      description,
      "x-kubernetes-validations": [
        cel(
          `self.all(k, size(k) <= ${Limits.resourceNameLength} && k.matches(${celString(RESOURCE_NAME_PATTERN)}))`,
          `resource names must be lowercase alphanumerics and '-', at most ${Limits.resourceNameLength} characters`,
        ),
        cel("!('runs' in self) || self['runs'] >= 1", "runs must be at least 1"),
      ],
    },
  );
}

/** metav1.Condition, with the same bounds and patterns as Kubernetes' own. */
export const ConditionSchema = Obj(
  {
    type: Str(316, {
      description: "Type of the condition, in CamelCase (e.g. `Ready`).",
      pattern:
        "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
    }),
    status: StringEnum(["True", "False", "Unknown"] as const, { description: "Status of the condition." }),
    observedGeneration: Type.Optional(
      Int64({ description: "`metadata.generation` the condition was set for.", minimum: 0 }),
    ),
    lastTransitionTime: Str(64, {
      description: "When the condition last changed status (RFC 3339).",
      format: "date-time",
    }),
    reason: Str(1024, {
      description: "Machine-readable CamelCase reason for the last transition.",
      minLength: 1,
      pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    }),
    message: Str(32768, { description: "Human-readable details of the last transition." }),
  },
  { description: "A standard Kubernetes condition (metav1.Condition)." },
);

export function Conditions(description: string) {
  return List(ConditionSchema, Limits.conditionCount, {
    description,
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  });
}

/** `status.observedGeneration`. */
export function ObservedGeneration() {
  return Int64({
    description: "The `metadata.generation` this status was computed from.",
    minimum: 0,
  });
}

export function Replicas(description: string, extra: { default?: number } = {}) {
  return Int32({ ...extra, description, minimum: 0, maximum: Limits.replicas });
}

export type Condition = Static<typeof ConditionSchema>;
