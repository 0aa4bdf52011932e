/** Aligned columns with a header row; `wide` columns appear only with `-o wide`. */

export interface Column<T> {
  header: string;
  value(item: T): string;
  wide?: boolean;
}

export function renderTable<T>(items: readonly T[], columns: readonly Column<T>[], wide: boolean): string {
  const cols = columns.filter((c) => wide || !c.wide);
  const rows = [cols.map((c) => c.header), ...items.map((it) => cols.map((c) => c.value(it) || "-"))];
  const widths = cols.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("   ")
        .trimEnd(),
    )
    .join("\n");
}
