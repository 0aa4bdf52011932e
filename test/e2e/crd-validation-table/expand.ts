/**
 * The table's two helpers: JSON merge patch (RFC 7386), and generators for values too big to
 * write out — `{$repeat: "x", times: N}` (a string), `{$entries: N, key: "r", value: V}` (a map
 * r0..rN-1 → V) and `{$items: N, of: V}` (a list; `{i}` in strings of V becomes the index).
 */

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function substitute(v: Json, i: number): Json {
  if (typeof v === "string") return v.replaceAll("{i}", String(i));
  if (Array.isArray(v)) return v.map((x) => substitute(x, i));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, i)]));
  return v;
}

export function expand(v: Json): Json {
  if (Array.isArray(v)) return v.map(expand);
  if (!isObject(v)) return v;
  if ("$repeat" in v) return String(v.$repeat).repeat(Number(v.times));
  if ("$entries" in v) {
    const n = Number(v.$entries);
    return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${v.key}${i}`, expand(v.value)]));
  }
  if ("$items" in v) {
    const n = Number(v.$items);
    return Array.from({ length: n }, (_, i) => expand(substitute(v.of, i)));
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expand(x)]));
}
