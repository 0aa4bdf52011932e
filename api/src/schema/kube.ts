/**
 * TypeBox builders for Kubernetes structural schemas. Every builder that makes a string, list or
 * map takes its bound as a required argument, so an unbounded field does not type-check: the
 * apiserver's CEL cost estimator rejects CRDs whose rules can see unbounded data.
 */
import {
  type ObjectOptions,
  type SchemaOptions,
  type Static,
  type StringOptions,
  type TObject,
  type TProperties,
  type TSchema,
  type TUnsafe,
  Type,
} from "@sinclair/typebox";

/** One `x-kubernetes-validations` entry: a CEL rule and the message shown when it is false. */
export interface CelRule {
  rule: string;
  message: string;
  /** Where the apiserver reports the error, relative to the schema node (e.g. `.env`). */
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
}

/** Kubernetes' own schema options on top of JSON Schema's. */
export interface KubeOptions extends SchemaOptions {
  description: string;
  "x-kubernetes-validations"?: CelRule[];
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
}

export function cel(rule: string, message: string, extra: Omit<CelRule, "rule" | "message"> = {}): CelRule {
  return { rule, message, ...extra };
}

/** A CEL string literal for `s` (CEL rejects `\.` and other unknown escapes in plain literals). */
export function celString(s: string): string {
  return `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

export function Str(maxLength: number, options: KubeOptions & Omit<StringOptions, "maxLength">) {
  return Type.String({ ...options, maxLength });
}

/** A closed set of strings: `{type: string, enum: [...]}` (TypeBox unions become `anyOf`, which is not structural). */
export function StringEnum<const T extends readonly string[]>(values: T, options: KubeOptions) {
  return Type.Unsafe<T[number]>({ ...options, type: "string", enum: [...values] });
}

export function Int32(options: KubeOptions & { minimum?: number; maximum?: number }) {
  return Type.Integer({ ...options, format: "int32" });
}

/** A 64-bit integer, capped at the largest integer a JSON parser in JavaScript reads exactly. */
export function Int64(options: KubeOptions & { minimum?: number; maximum?: number }) {
  return Type.Integer({ maximum: Number.MAX_SAFE_INTEGER, ...options, format: "int64" });
}

export function Bool(options: KubeOptions) {
  return Type.Boolean(options);
}

export function Num(options: KubeOptions & { minimum?: number; maximum?: number }) {
  return Type.Number(options);
}

export function List<T extends TSchema>(
  items: T,
  maxItems: number,
  options: KubeOptions & { minItems?: number },
) {
  return Type.Array(items, { ...options, maxItems });
}

/** A string-keyed map: `{type: object, additionalProperties: <value>}`. */
export function MapOf<T extends TSchema>(
  value: T,
  maxProperties: number,
  options: KubeOptions & { minProperties?: number },
) {
  return Type.Unsafe<Record<string, Static<T>>>({
    ...options,
    type: "object",
    additionalProperties: value,
    maxProperties,
  });
}

export function Obj<P extends TProperties>(properties: P, options: KubeOptions & ObjectOptions) {
  return Type.Object(properties, options);
}

/**
 * An object whose known fields are validated and whose other fields are kept as they are
 * (`x-kubernetes-preserve-unknown-fields`), e.g. a Pod spec. CEL can only see the known fields.
 */
export function Open<P extends TProperties>(
  properties: P,
  options: KubeOptions & { maxProperties?: number; minProperties?: number },
) {
  const object: TObject<P> = Type.Object(properties, options);
  return Type.Unsafe<Static<TObject<P>> & { [field: string]: unknown }>({
    ...object,
    "x-kubernetes-preserve-unknown-fields": true,
  }) as TUnsafe<Static<TObject<P>> & { [field: string]: unknown }>;
}

export { Type };
