// Reportify pages: the index of compilations, and one compilation's passes, placement and perf.
// Data comes from index_data.js / models/<id>/data.js (plain script files, so pages open from disk too).
"use strict";

const PALETTE = ["#f4a261", "#2a9d8f", "#e9c46a", "#8ab17d", "#e76f51", "#9d8df1", "#4ea8de", "#f28482",
                 "#84a59d", "#c9ada7", "#ffb4a2", "#90be6d"];

function colourFor(text) {
  let h = 0;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

function el(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== "") node.textContent = text;
  return node;
}

function fmt(x, digits = 1) {
  return typeof x === "number" ? x.toLocaleString(undefined, { maximumFractionDigits: digits }) : String(x ?? "");
}

// ---- index ------------------------------------------------------------------------------------
function renderIndex() {
  const rows = window.REPORTIFY_INDEX || [];
  const body = document.querySelector("#compilations tbody");
  document.getElementById("empty").hidden = rows.length > 0;
  for (const r of rows) {
    const tr = el("tr", { "data-id": r.id });
    for (const value of [r.model, r.framework, r.time.replace("T", " "), fmt(100 * r.device_share) + "%",
                         r.graph_breaks, fmt(r.samples_per_second), r.board]) {
      tr.appendChild(el("td", {}, String(value)));
    }
    tr.addEventListener("click", () => { location.href = "model.html?id=" + encodeURIComponent(r.id); });
    body.appendChild(tr);
  }
}

// ---- model: passes ----------------------------------------------------------------------------
const GRAPH_STYLE = [
  { selector: "node", style: { "label": "data(label)", "text-wrap": "wrap", "text-valign": "center",
      "font-size": 10, "width": "label", "height": "label", "padding": 8, "shape": "round-rectangle",
      "background-color": "#fff", "border-width": 1, "border-color": "#555" } },
  { selector: "node.input", style: { "shape": "ellipse", "background-color": "#9fd3ff", "border-width": 0 } },
  { selector: "node.parameter", style: { "shape": "ellipse", "background-color": "#2f5fa8", "color": "#fff",
      "border-width": 0 } },
  { selector: "node.constant", style: { "shape": "ellipse", "background-color": "#8fa3bf", "border-width": 0 } },
  { selector: "node.output", style: { "shape": "hexagon", "background-color": "#ffe3a3" } },
  { selector: "node.device", style: { "background-color": "#d6f5d6" } },
  { selector: "node.host", style: { "background-color": "#e8e8e8" } },
  { selector: "node:selected", style: { "border-width": 3, "border-color": "#2f6fdf" } },
  { selector: "edge", style: { "width": 1.2, "line-color": "#9aa3b0", "target-arrow-color": "#9aa3b0",
      "target-arrow-shape": "triangle", "curve-style": "bezier" } },
];

function showNode(node) {
  const meta = node.meta || {};
  document.getElementById("node-title").textContent = `${node.kind}: ${meta.name || node.id}`;
  const table = document.getElementById("node-meta");
  table.replaceChildren();
  for (const [k, v] of Object.entries(meta)) {
    const tr = el("tr");
    tr.appendChild(el("td", {}, k.replace(/_/g, " ")));
    tr.appendChild(el("td", {}, typeof v === "object" ? JSON.stringify(v) : String(v)));
    table.appendChild(tr);
  }
  document.getElementById("node-dialog").showModal();
}

function drawGraph(snapshot) {
  document.getElementById("pass-why").textContent = snapshot.why || "";
  const elements = snapshot.graph.nodes.map(n => ({
    data: { id: n.id, label: n.label, raw: n },
    classes: [n.kind, n.meta && n.meta.placement].filter(Boolean).join(" "),
  })).concat(snapshot.graph.edges.map((e, i) => ({ data: { id: "e" + i, source: e.source, target: e.target } })));
  if (window.reportifyGraph) window.reportifyGraph.destroy();
  const cy = cytoscape({ container: document.getElementById("graph"), elements, style: GRAPH_STYLE,
                         layout: { name: "dagre", rankDir: "TB", nodeSep: 20, rankSep: 30 }, wheelSensitivity: 0.3 });
  cy.on("tap", "node", evt => showNode(evt.target.data("raw")));
  window.reportifyGraph = cy;
}

function setupPasses(data) {
  const select = document.getElementById("pass-select");
  data.passes.forEach((p, i) => select.appendChild(el("option", { value: String(i) }, p.name)));
  select.addEventListener("change", () => drawGraph(data.passes[Number(select.value)]));
  if (data.passes.length) drawGraph(data.passes[0]);
}

// ---- model: placement -------------------------------------------------------------------------
function drawEpoch(epoch) {
  const [rows, cols] = epoch.grid;
  document.getElementById("epoch-info").textContent =
    `grid ${rows} x ${cols} cores, ${epoch.ops.length} ops, ${fmt(epoch.cycles, 0)} cycles per stage, ` +
    `${fmt(epoch.samples_per_second)} samples/s, slowest: ${epoch.slowest_op}`;
  const grid = document.getElementById("grid");
  grid.replaceChildren();
  grid.style.gridTemplateColumns = `repeat(${cols}, 46px)`;
  grid.style.gridTemplateRows = `repeat(${rows}, 34px)`;
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const core = el("div", { class: "core" });
    core.style.gridRow = String(r + 1); core.style.gridColumn = String(c + 1);
    grid.appendChild(core);
  }
  const boxes = {};
  for (const op of epoch.ops) {
    const box = el("div", { class: "op", "data-name": op.name }, op.name);
    box.style.gridRow = `${op.row + 1} / span ${op.grid[0]}`;
    box.style.gridColumn = `${op.col + 1} / span ${op.grid[1]}`;
    box.style.background = colourFor(op.op_type);
    box.addEventListener("mouseenter", evt => hoverOp(epoch, op, boxes, evt));
    box.addEventListener("mouseleave", () => unhover(boxes));
    grid.appendChild(box);
    boxes[op.name] = box;
  }
  const svg = document.getElementById("edges");
  svg.setAttribute("width", grid.offsetWidth); svg.setAttribute("height", grid.offsetHeight);
  svg.replaceChildren();
}

function centre(box) {
  return [box.offsetLeft + box.offsetWidth / 2, box.offsetTop + box.offsetHeight / 2];
}

function hoverOp(epoch, op, boxes, evt) {
  const svg = document.getElementById("edges");
  svg.replaceChildren();
  const related = new Set([op.name]);
  for (const [src, dst] of epoch.edges) {
    if (src !== op.name && dst !== op.name) continue;
    const incoming = dst === op.name;
    related.add(incoming ? src : dst);
    const [x1, y1] = centre(boxes[src]); const [x2, y2] = centre(boxes[dst]);
    const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
    Object.entries({ x1, y1, x2, y2, stroke: incoming ? "#f08c00" : "#1c7ed6", "stroke-width": 3,
                     class: incoming ? "edge-in" : "edge-out" }).forEach(([k, v]) => line.setAttribute(k, v));
    svg.appendChild(line);
  }
  for (const [name, box] of Object.entries(boxes)) box.classList.toggle("dim", !related.has(name));
  const hover = document.getElementById("hover");
  hover.replaceChildren(el("b", {}, op.name));
  for (const [k, v] of Object.entries({ type: op.op_type, grid: op.grid.join("x"), "top-left core": `${op.row}, ${op.col}`,
                                        cycles: fmt(op.cycles, 0), format: op.data_format, fidelity: op.math_fidelity,
                                        bound: op.bound, tiles: op.tiles })) {
    hover.appendChild(el("div", {}, `${k}: ${v}`));
  }
  hover.appendChild(el("div", { class: "sub" }, "orange: inputs, blue: outputs"));
  hover.style.left = evt.clientX + 16 + "px"; hover.style.top = evt.clientY + 16 + "px";
  hover.hidden = false;
}

function unhover(boxes) {
  document.getElementById("edges").replaceChildren();
  Object.values(boxes).forEach(b => b.classList.remove("dim"));
  document.getElementById("hover").hidden = true;
}

function setupPlacement(data) {
  const select = document.getElementById("epoch-select");
  data.placement.forEach((e, i) => select.appendChild(el("option", { value: String(i) }, `epoch ${e.index}`)));
  select.addEventListener("change", () => drawEpoch(data.placement[Number(select.value)]));
  return () => { if (data.placement.length) drawEpoch(data.placement[Number(select.value || 0)]); };
}

// ---- model: perf ------------------------------------------------------------------------------
function setupPerf(data) {
  document.getElementById("perf-summary").textContent = data.perf.summary;
  const columns = ["name", "op_type", "grid", "epoch", "cycles", "math_cycles", "data_cycles", "bound", "data_format",
                   "math_fidelity", "note"];
  const head = el("tr");
  columns.forEach(c => head.appendChild(el("th", {}, c.replace(/_/g, " "))));
  document.querySelector("#perf-table thead").appendChild(head);
  const body = document.querySelector("#perf-table tbody");
  for (const op of data.perf.ops) {
    const tr = el("tr");
    for (const c of columns) {
      const v = op[c];
      tr.appendChild(el("td", {}, Array.isArray(v) ? v.join("x") : typeof v === "number" ? fmt(v, 0) : String(v ?? "")));
    }
    body.appendChild(tr);
  }
}

function renderModel(data) {
  document.title = `Reportify · ${data.model}`;
  document.getElementById("title").textContent = data.model;
  document.getElementById("subtitle").textContent =
    `${data.framework} · ${data.time.replace("T", " ")} · ${fmt(100 * data.device_share)}% of ops on the device · ` +
    `${data.graph_breaks} graph break(s) · est. ${fmt(data.samples_per_second)} samples/s on ${data.board}`;
  setupPasses(data);
  const showPlacement = setupPlacement(data);
  setupPerf(data);
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => {
      document.querySelectorAll("#tabs button").forEach(b => b.classList.toggle("active", b === button));
      document.querySelectorAll("section.tab").forEach(s => { s.hidden = s.id !== button.dataset.tab; });
      if (button.dataset.tab === "placement") showPlacement();
      if (button.dataset.tab === "passes" && window.reportifyGraph) window.reportifyGraph.resize();
    });
  }
  document.body.dataset.ready = "1";
}

function loadModel() {
  const id = new URLSearchParams(location.search).get("id") || "";
  if (!/^[A-Za-z0-9_-]+$/.test(id)) { document.getElementById("title").textContent = "unknown model"; return; }
  const script = el("script", { src: `models/${id}/data.js` });
  script.onload = () => renderModel(window.REPORTIFY_MODEL);
  script.onerror = () => { document.getElementById("title").textContent = `no report ${id}`; };
  document.head.appendChild(script);
}

if (document.body.dataset.page === "index") renderIndex(); else loadModel();
