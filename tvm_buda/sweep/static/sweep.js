// The sweep report: summary, two plots (inline SVG) and a sortable, filterable table of every job.
// Data: data.js (window.SWEEP = {columns, rows, total, summary, written}); the plots follow the filter.
"use strict";

const FORMAT_COLOURS = ["#2f6fdf", "#e76f51", "#2a9d8f", "#9d8df1", "#e9c46a", "#84a59d", "#f28482", "#4ea8de"];
const FIDELITY_ORDER = ["LoFi", "HiFi2", "HiFi3", "HiFi4"];
const NUMERIC = new Set(["pcc", "max_abs_error", "atol", "device_share", "device_ops", "cpu_ops", "graph_breaks",
                         "compile_s", "run_s", "samples_per_second", "wall_s"]);
const HIDDEN = new Set(["worker", "key", "atol", "finished"]);
const SVG = "http://www.w3.org/2000/svg";
const data = window.SWEEP || { columns: [], rows: [], total: 0, summary: {}, written: "" };
const state = { sortKey: null, sortDir: 1, text: "", status: "" };

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== "") node.textContent = text;
  return node;
}

function svgEl(tag, attrs = {}, text = "") {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== "") node.textContent = text;
  return node;
}

function fmt(key, v) {
  if (v === null || v === undefined) return "";
  if (key === "device_share") return (100 * v).toFixed(0) + "%";
  if (key === "pcc") return v.toFixed(5);
  if (typeof v === "number") return v.toLocaleString(undefined, { maximumSignificantDigits: 4 });
  return String(v);
}

function columns() { return data.columns.filter(c => !HIDDEN.has(c)); }

function visibleRows() {
  const words = state.text.toLowerCase().split(/\s+/).filter(Boolean);
  let rows = data.rows.filter(r => (!state.status || r.status === state.status) &&
    words.every(w => columns().some(c => fmt(c, r[c]).toLowerCase().includes(w))));
  if (state.sortKey) {
    const k = state.sortKey;
    rows = rows.slice().sort((a, b) => {
      const x = a[k], y = b[k];
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * state.sortDir;
    });
  }
  return rows;
}

function renderTable() {
  const rows = visibleRows();
  const body = document.querySelector("#results tbody");
  body.replaceChildren();
  for (const r of rows) {
    const tr = el("tr");
    for (const c of columns()) {
      const td = el("td", { class: NUMERIC.has(c) ? "num" : c === "error" ? "error" : "" }, fmt(c, r[c]));
      if (c === "status") td.className = "s-" + r.status;
      if (c === "error" && r.error) td.title = r.error;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  document.getElementById("shown").textContent = `${rows.length} of ${data.rows.length} rows`;
  for (const th of document.querySelectorAll("#results th")) {
    th.className = th.dataset.key === state.sortKey ? (state.sortDir > 0 ? "asc" : "desc") : "";
  }
  drawAccuracy(rows);
  drawThroughput(rows);
}

function setup() {
  const head = document.querySelector("#results thead tr");
  for (const c of columns()) {
    const th = el("th", { "data-key": c }, c.replace(/_/g, " "));
    th.addEventListener("click", () => {
      state.sortDir = state.sortKey === c ? -state.sortDir : (NUMERIC.has(c) ? -1 : 1);
      state.sortKey = c;
      renderTable();
    });
    head.appendChild(th);
  }
  const select = document.getElementById("status-filter");
  for (const s of Object.keys(data.summary).sort()) select.appendChild(el("option", { value: s }, s));
  select.addEventListener("change", () => { state.status = select.value; renderTable(); });
  document.getElementById("filter").addEventListener("input", e => { state.text = e.target.value; renderTable(); });
  const finished = data.rows.length;
  document.getElementById("subtitle").textContent =
    `${finished} of ${data.total} jobs finished · written ${data.written}`;
  const summary = document.getElementById("summary");
  for (const [status, count] of Object.entries(data.summary).sort()) {
    const chip = el("span", { class: "chip" });
    chip.appendChild(el("b", { class: "s-" + status }, String(count)));
    chip.appendChild(document.createTextNode(status));
    summary.appendChild(chip);
  }
  renderTable();
  document.body.dataset.ready = "1";
}

// ---- plots: categories on x (one slot per category, one lane per data format), a value scale on y ----
function formats(rows) { return [...new Set(data.rows.map(r => r.data_format))].sort(); }

function jitter(text) {
  let h = 7;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return (h % 1000) / 1000 - 0.5;
}

function stripPlot(svg, rows, category, categories, value, ticks, label, threshold) {
  svg.replaceChildren();
  const W = +svg.getAttribute("width"), H = +svg.getAttribute("height");
  const left = 56, right = 10, top = 22, bottom = 34;
  const lo = ticks[0][0], hi = ticks[ticks.length - 1][0];
  const y = v => top + (H - top - bottom) * (1 - (Math.min(Math.max(v, lo), hi) - lo) / (hi - lo));
  for (const [v, text] of ticks) {
    svg.appendChild(svgEl("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }));
    svg.appendChild(svgEl("text", { x: left - 4, y: y(v) + 3, "text-anchor": "end" }, text));
  }
  svg.appendChild(svgEl("text", { x: 10, y: 12 }, label));
  if (threshold !== undefined) {
    svg.appendChild(svgEl("line", { x1: left, x2: W - right, y1: y(threshold), y2: y(threshold), class: "threshold" }));
  }
  const fmts = formats(rows);
  const slot = (W - left - right) / Math.max(categories.length, 1);
  const lane = slot / Math.max(fmts.length, 1);
  categories.forEach((cat, i) => {
    svg.appendChild(svgEl("text", { x: left + slot * (i + 0.5), y: H - bottom + 14, "text-anchor": "middle" }, cat));
    fmts.forEach((f, j) => {
      const group = rows.filter(r => r[category] === cat && r.data_format === f && value(r) !== null);
      const cx = left + slot * i + lane * (j + 0.5);
      const colour = FORMAT_COLOURS[j % FORMAT_COLOURS.length];
      for (const r of group) {
        const dot = svgEl("circle", { cx: cx + jitter(r.model) * lane * 0.6, cy: y(value(r)), r: 3, fill: colour,
                                      "fill-opacity": 0.65 });
        dot.appendChild(svgEl("title", {}, `${r.model} ${r.data_format} ${r.fidelity} ${r.device_config}: ` +
                                          `pcc ${fmt("pcc", r.pcc)}, ${fmt("", r.samples_per_second)} samples/s`));
        svg.appendChild(dot);
      }
      if (group.length) {
        const sorted = group.map(value).sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)];
        svg.appendChild(svgEl("line", { x1: cx - lane * 0.35, x2: cx + lane * 0.35, y1: y(median), y2: y(median),
                                        class: "median" }));
      }
    });
  });
  fmts.forEach((f, j) => {
    const x = W - right - 90 * (fmts.length - j);
    svg.appendChild(svgEl("circle", { cx: x, cy: H - 8, r: 4, fill: FORMAT_COLOURS[j % FORMAT_COLOURS.length] }));
    svg.appendChild(svgEl("text", { x: x + 7, y: H - 5 }, f));
  });
  svg.appendChild(svgEl("line", { x1: left, x2: left, y1: top, y2: H - bottom, class: "axis" }));
}

function drawAccuracy(rows) {
  // PCC on a "nines" scale: 0.9 -> 1, 0.99 -> 2, ... (1 - pcc on a log scale), negatives at the bottom.
  const nines = r => (typeof r.pcc === "number" ? -Math.log10(Math.max(1 - r.pcc, 1e-7)) : null);
  const seen = new Set(data.rows.map(r => r.fidelity));
  const cats = FIDELITY_ORDER.filter(f => seen.has(f)).concat([...seen].filter(f => !FIDELITY_ORDER.includes(f)));
  const ticks = [[0, "≤0"], [1, "0.9"], [2, "0.99"], [3, "0.999"], [4, "0.9999"], [5, "0.99999"], [6, "0.999999"],
                 [7, "1"]];
  stripPlot(document.getElementById("plot-accuracy"), rows, "fidelity", cats, nines, ticks, "PCC", 2);
}

function drawThroughput(rows) {
  const values = rows.map(r => r.samples_per_second).filter(v => typeof v === "number" && v > 0);
  const lo = Math.floor(Math.log10(Math.min(...values, 10))), hi = Math.ceil(Math.log10(Math.max(...values, 100)));
  const ticks = [];
  for (let e = lo; e <= hi; e++) ticks.push([e, e >= 3 ? `1e${e}` : String(10 ** e)]);
  const cats = [...new Set(data.rows.map(r => r.device_config))].sort();
  const logv = r => (typeof r.samples_per_second === "number" && r.samples_per_second > 0
    ? Math.log10(r.samples_per_second) : null);
  stripPlot(document.getElementById("plot-throughput"), rows, "device_config", cats, logv, ticks, "samples/s");
}

setup();
