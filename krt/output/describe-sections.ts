/**
 * The sections `krt describe` and `krt wfrun describe` end alike with: Conditions and Events, each
 * a table indented under its heading, or `<none>`; one place, so the two read the same.
 */
import type { Condition } from "@kruntimes/api";
import { eventTime, type KubeEvent } from "@kruntimes/kube";
import { humanAge } from "./age.ts";
import { type Column, renderTable } from "./table.ts";

export { eventTime, type KubeEvent };

export function conditionsSection(conds: readonly Condition[], nowMs: number): string[] {
  return section("Conditions:", conds, [
    { header: "TYPE", value: (c) => c.type },
    { header: "STATUS", value: (c) => c.status },
    { header: "REASON", value: (c) => c.reason ?? "" },
    { header: "AGE", value: (c) => humanAge(c.lastTransitionTime, nowMs) },
    { header: "MESSAGE", value: (c) => c.message ?? "" },
  ]);
}

export function eventsSection(events: readonly KubeEvent[], nowMs: number): string[] {
  return section("Events:", events, [
    { header: "TYPE", value: (e) => e.type ?? "" },
    { header: "REASON", value: (e) => e.reason ?? "" },
    { header: "AGE", value: (e) => humanAge(eventTime(e), nowMs) },
    { header: "COUNT", value: (e) => String(e.count ?? 1) },
    { header: "MESSAGE", value: (e) => e.message ?? "" },
  ]);
}

/** The heading, then the table two spaces in, or `<none>`. */
function section<T>(heading: string, items: readonly T[], columns: readonly Column<T>[]): string[] {
  return [heading, items.length === 0 ? "  <none>" : indent(renderTable(items, columns, false))];
}

/** Every line two spaces in. */
export function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}
