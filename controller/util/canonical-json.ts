/** JSON with object keys sorted, so values read back from the apiserver compare equal. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) => {
    if (!val || typeof val !== "object" || Array.isArray(val)) return val;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(val).sort()) out[k] = (val as Record<string, unknown>)[k];
    return out;
  });
}
