/**
 * Timestamps as the apiserver stores metav1.Time: RFC 3339 with whole seconds. Writing finer ones
 * would make every read-back differ from what was written, and status would be rewritten forever.
 */
export function apiTime(d: Date | number = Date.now()): string {
  return new Date(typeof d === "number" ? d : d.getTime()).toISOString().replace(/\.\d+Z$/, "Z");
}
