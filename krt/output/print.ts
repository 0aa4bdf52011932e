/** Prints one object or a list in the chosen `-o` format. */
import type { KubeObject } from "@kruntimes/kube";
import YAML from "yaml";
import type { OutputFormat } from "../options.ts";
import { type Column, renderTable } from "./table.ts";

export function formatObjects<T extends KubeObject>(
  items: readonly T[],
  format: OutputFormat,
  columns: readonly Column<T>[],
  single: boolean,
): string {
  switch (format) {
    case "json":
      return JSON.stringify(single ? items[0] : asList(items), null, 2);
    case "yaml":
      return YAML.stringify(single ? items[0] : asList(items));
    case "name":
      return items.map((i) => i.metadata.name ?? "").join("\n");
    case "table":
    case "wide":
      if (items.length === 0) return "";
      return renderTable(items, columns, format === "wide");
  }
}

function asList<T>(items: readonly T[]) {
  return { apiVersion: "v1", kind: "List", items };
}
