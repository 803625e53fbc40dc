// The outage plot: requests the server received per 100 ms, one line per client, the outage
// shaded. Plain SVG text, no external resources.
const COLORS = ["#7f7f7f", "#d62728", "#ff7f0e", "#bcbd22", "#8c564b", "#9467bd", "#e377c2", "#1f77b4", "#17becf"];

const esc = (s) => String(s).replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c]);

/**
 * @param {{label: string, per100ms: number[]}[]} series
 * @param {{start: number, end: number}} window outage, ms from the workload's start
 */
export function outagePlot(series, window, { width = 900, height = 420, title = "" } = {}) {
  const m = { left: 56, right: 220, top: 36, bottom: 44 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const bins = Math.max(...series.map((s) => s.per100ms.length));
  const ymax = Math.max(1, ...series.flatMap((s) => s.per100ms));
  const yTop = Math.ceil(ymax / 10) * 10;
  const x = (bin) => m.left + (bin / bins) * w;
  const y = (v) => m.top + h - (v / yTop) * h;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${m.left}" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`);
  if (window) {
    const x0 = x(window.start / 100);
    const x1 = x(window.end / 100);
    out.push(`<rect x="${x0.toFixed(1)}" y="${m.top}" width="${(x1 - x0).toFixed(1)}" height="${h}" fill="#fdd" />`);
    out.push(`<text x="${(x0 + 4).toFixed(1)}" y="${m.top + 14}" fill="#a33">outage (503)</text>`);
  }
  for (let i = 0; i <= 5; i++) {
    const v = (yTop * i) / 5;
    out.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
    out.push(`<text x="${m.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Math.round(v)}</text>`);
  }
  for (let s = 0; s <= bins / 10; s++) {
    out.push(`<text x="${x(s * 10).toFixed(1)}" y="${m.top + h + 16}" text-anchor="middle">${s}</text>`);
  }
  out.push(`<text x="${m.left + w / 2}" y="${height - 8}" text-anchor="middle">seconds since the workload started</text>`);
  out.push(`<text transform="translate(14 ${m.top + h / 2}) rotate(-90)" text-anchor="middle">requests per 100 ms</text>`);
  out.push(`<rect x="${m.left}" y="${m.top}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const points = s.per100ms.map((v, bin) => `${x(bin + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${points}"/>`);
    const ly = m.top + 10 + i * 18;
    out.push(`<line x1="${m.left + w + 14}" x2="${m.left + w + 34}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="${m.left + w + 40}" y="${ly + 4}">${esc(s.label)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/**
 * Grouped bars: one group per `groups` entry, one bar per series in each (the map view's holes).
 * @param {{label: string, values: number[]}[]} series values in the order of `groups`
 */
export function barPlot(series, groups, { width = 900, height = 420, title = "", yLabel = "" } = {}) {
  const m = { left: 56, right: 240, top: 36, bottom: 44 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const ymax = Math.max(1, ...series.flatMap((s) => s.values));
  const yTop = Math.ceil(ymax / 5) * 5;
  const y = (v) => m.top + h - (v / yTop) * h;
  const groupW = w / Math.max(1, groups.length);
  const barW = (groupW * 0.8) / Math.max(1, series.length);
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${m.left}" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 5; i++) {
    const v = (yTop * i) / 5;
    out.push(`<line x1="${m.left}" x2="${m.left + w}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
    out.push(`<text x="${m.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Math.round(v)}</text>`);
  }
  groups.forEach((g, gi) => {
    out.push(`<text x="${(m.left + groupW * (gi + 0.5)).toFixed(1)}" y="${m.top + h + 16}" text-anchor="middle">${esc(g)}</text>`);
    series.forEach((s, si) => {
      const v = s.values[gi] ?? 0;
      const x = m.left + groupW * gi + groupW * 0.1 + barW * si;
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(m.top + h - y(v)).toFixed(1)}" fill="${COLORS[si % COLORS.length]}"/>`,
      );
    });
  });
  out.push(`<text transform="translate(14 ${m.top + h / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  out.push(`<rect x="${m.left}" y="${m.top}" width="${w}" height="${h}" fill="none" stroke="#999"/>`);
  series.forEach((s, i) => {
    const ly = m.top + 10 + i * 18;
    out.push(`<rect x="${m.left + w + 14}" y="${ly - 6}" width="20" height="10" fill="${COLORS[i % COLORS.length]}"/>`);
    out.push(`<text x="${m.left + w + 40}" y="${ly + 4}">${esc(s.label)}</text>`);
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
