// What the report sections of bench/RESULTS.md write numbers and tables with.

/** A number rounded, with thousands separators; "—" for none. */
export const int = (n) => (n == null ? "—" : Math.round(n).toLocaleString("en-US"));
/** A ratio as "1.03×"; "—" for none. */
export const ratio = (v) => (v == null || Number.isNaN(v) ? "—" : `${v.toFixed(2)}×`);
/** A Markdown table row. */
export const row = (cells) => `| ${cells.join(" | ")} |`;
/** A Markdown table: a head row, its rule and the rows. */
export const table = (head, rows) => [row(head), row(head.map(() => "---")), ...rows.map(row)].join("\n");
