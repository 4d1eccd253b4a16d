"use strict";
// The case table of board.html (fcb board). Data: #board-data holds {datasets: [...]}, gzip-compressed and
// base64-encoded; per data set: runs [{label, report, ...}], best (a run's position), ids, cats, cat (a category's
// position per case), exp (one letter per case: l, m, h), origin, pred (per run one letter per case: l, m, h, e for
// an error, - not run), score (per run, or null), err and reply (per run, case position -> value), analysis
// ({difficulty, discrimination, suspect, strongest} or null), text (per case [question, answers, evidence,
// ground_truth, rationale] or null). Every figure is computed by the harness; this script filters and draws.
(function () {
  const WORD = { l: "low", m: "medium", h: "high", e: "error", "-": "not run" };
  const PAGE = 200; // rows drawn at once; "show more" draws the next ones
  let ALL = null;
  let D = null; // the chosen data set
  let nRight = null; // per case: runs right
  let view = [];
  let shown = PAGE;
  let sortKey = null;
  let sortDir = 1;
  const $ = (sel, el) => (el || document).querySelector(sel);
  const $$ = (sel, el) => Array.from((el || document).querySelectorAll(sel));
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, (c) => ESC[c]);
  const list = (x) => (Array.isArray(x) ? x : []);

  async function unpack() {
    const bin = atob($("#board-data").textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  const right = (k, i) => D.pred[k][i] === D.exp[i];

  function choose(ds) {
    D = ALL.datasets[ds];
    $$("section.ds").forEach((s) => { s.hidden = Number(s.dataset.ds) !== ds; });
    const n = D.ids.length;
    nRight = new Int32Array(n);
    for (let k = 0; k < D.runs.length; k++) for (let i = 0; i < n; i++) if (right(k, i)) nRight[i]++;
    sortKey = null;
    $("#explorer").innerHTML = filtersHtml() + tableHtml();
    wire();
    apply();
  }

  function option(value, text) {
    return '<option value="' + esc(value) + '">' + esc(text) + "</option>";
  }

  function select(id, label, options) {
    return "<label>" + esc(label) + ' <select id="' + id + '" class="f">' + options.map((o) => option(o[0], o[1])).join("") + "</select></label>";
  }

  function filtersHtml() {
    const runs = D.runs.map((r, k) => [String(k), r.label]);
    const sets = [["", "any"], ["allwrong", "all wrong"]];
    if (D.best !== null) sets.push(["bestonly", "only the best right (" + D.runs[D.best].label + ")"]);
    if (D.analysis) sets.push(["suspect", "suspect labels"]);
    let out = '<div class="filters">';
    out += select("f-cat", "category", [["", "any"], ...D.cats.map((c, k) => [String(k), c])]);
    out += select("f-set", "cases", sets);
    out += select("f-a", "disagreement: detector", [["", "-"], ...runs]);
    out += select("f-b", "and detector", [["", "-"], ...runs]);
    out += '<label>text <input id="f-text" class="f" type="search" placeholder="id, question, answer..."></label>';
    out += '<button id="f-reset" type="button">reset</button><span id="count"></span></div>';
    return out + D.notes.map((n) => '<p class="note">' + esc(n) + "</p>").join("");
  }

  function columns() {
    const cols = [["id", "id"], ["category", "cat"], ["expected", "exp"]];
    D.runs.forEach((r, k) => cols.push([r.label, "run" + k]));
    cols.push(["right", "right"]);
    if (D.analysis) cols.push(["difficulty", "difficulty"], ["discrimination", "discrimination"], ["suspect", "suspect"]);
    return cols;
  }

  function tableHtml() {
    const head = columns().map((c) => '<th data-key="' + c[1] + '" title="' + esc(c[0]) + '">' + esc(c[0]) + "</th>").join("");
    return '<table id="cases" class="board-cases"><thead><tr>' + head + '</tr></thead><tbody></tbody></table>' +
      '<button id="more" type="button" hidden></button>';
  }

  function value(id) {
    const el = document.getElementById(id);
    return el ? el.value : "";
  }

  function haystack(i) {
    const t = D.text ? D.text[i] : null;
    const parts = [D.ids[i]];
    if (t) {
      parts.push(t[0]);
      for (const a of list(t[1])) parts.push(a[0], a[1]);
    }
    return parts.join("\n").toLowerCase();
  }

  function apply() {
    const cat = value("f-cat"), set = value("f-set"), a = value("f-a"), b = value("f-b");
    const text = value("f-text").trim().toLowerCase();
    const catK = cat === "" ? -1 : Number(cat);
    const pa = a === "" ? null : D.pred[Number(a)], pb = b === "" ? null : D.pred[Number(b)];
    const disagree = pa !== null && pb !== null && a !== b;
    view = [];
    for (let i = 0; i < D.ids.length; i++) {
      if (catK >= 0 && D.cat[i] !== catK) continue;
      if (set === "allwrong" && nRight[i] !== 0) continue;
      if (set === "bestonly" && !(nRight[i] === 1 && right(D.best, i))) continue;
      if (set === "suspect" && !D.analysis.suspect[i]) continue;
      if (disagree && pa[i] === pb[i]) continue;
      if (text && !haystack(i).includes(text)) continue;
      view.push(i);
    }
    sortView();
    shown = PAGE;
    draw();
  }

  function key(name, i) {
    if (name === "id") return D.ids[i];
    if (name === "cat") return D.cats[D.cat[i]];
    if (name === "exp") return "lmh".indexOf(D.exp[i]);
    if (name === "right") return nRight[i];
    if (name.startsWith("run")) return right(Number(name.slice(3)), i) ? 1 : 0;
    const v = D.analysis[name][i];
    return v === null ? -2 : v;
  }

  function sortView() {
    if (sortKey === null) return;
    view.sort((x, y) => {
      const p = key(sortKey, x), q = key(sortKey, y);
      return (p < q ? -1 : p > q ? 1 : x - y) * sortDir;
    });
  }

  function rowHtml(i) {
    let out = '<tr data-i="' + i + '"><td>' + esc(D.ids[i]) + "</td><td>" + esc(D.cats[D.cat[i]]) + "</td><td>" + WORD[D.exp[i]] + "</td>";
    for (let k = 0; k < D.runs.length; k++) {
      const p = D.pred[k][i];
      out += '<td class="' + (p === D.exp[i] ? "ok" : "bad") + '">' + WORD[p] + "</td>";
    }
    out += "<td>" + nRight[i] + "/" + D.runs.length + "</td>";
    if (D.analysis) {
      const disc = D.analysis.discrimination[i];
      out += "<td>" + D.analysis.difficulty[i].toFixed(2) + "</td><td>" + (disc === null ? "n/a" : disc.toFixed(2)) + "</td><td>" +
        (D.analysis.suspect[i] ? '<span class="bad">suspect</span>' : "") + "</td>";
    }
    return out + "</tr>";
  }

  function draw() {
    $("#cases tbody").innerHTML = view.slice(0, shown).map(rowHtml).join("");
    $("#count").textContent = view.length + " of " + D.ids.length + " cases";
    const more = $("#more");
    more.hidden = view.length <= shown;
    more.textContent = "show " + Math.min(PAGE, view.length - shown) + " more (of " + (view.length - shown) + " not shown)";
  }

  function replyHtml(i, k) {
    const r = D.runs[k], p = D.pred[k][i];
    const link = r.report ? ' <a href="' + esc(r.report) + '">report</a>' : "";
    let out = "<h3>" + esc(r.label) + (k === D.best ? " (best)" : "") + link + "</h3><p>predicted <b>" + WORD[p] + "</b> (" +
      (p === D.exp[i] ? '<span class="ok">right</span>' : '<span class="bad">wrong</span>') + ")";
    const s = D.score[k] ? D.score[k][i] : null;
    if (s !== null && s !== undefined) out += "; score " + esc(s);
    out += "</p>";
    const e = D.err[k][i];
    if (e) out += '<p class="err">error: <b>' + esc(e[0]) + "</b></p><pre>" + esc(e[1]) + "</pre>";
    const reply = D.reply[k][i];
    if (reply) out += "<pre>" + esc(reply) + "</pre>";
    return '<div class="reply" data-run="' + k + '">' + out + "</div>";
  }

  function textHtml(t) {
    let out = '<h3>Question</h3><div class="pre">' + esc(t[0]) + "</div>";
    out += '<h3>Answers</h3><table class="answers"><thead><tr><th>agent</th><th>answer</th></tr></thead><tbody>' +
      list(t[1]).map((a) => "<tr><td>" + esc(a[0]) + '</td><td class="answer">' + esc(a[1]) + "</td></tr>").join("") + "</tbody></table>";
    const ev = list(t[2]);
    if (ev.length) out += "<h3>Evidence</h3><ul>" + ev.map((x) => "<li>" + esc(x) + "</li>").join("") + "</ul>";
    if (t[3] !== null && t[3] !== undefined) out += "<h3>Ground truth</h3><p>" + esc(t[3]) + "</p>";
    if (t[4]) out += "<h3>Rationale</h3><p>" + esc(t[4]) + "</p>";
    return out;
  }

  function open(i) {
    $$("#cases tbody tr.sel").forEach((tr) => tr.classList.remove("sel"));
    const tr = $('#cases tbody tr[data-i="' + i + '"]');
    if (tr) tr.classList.add("sel");
    let out = '<button class="close" type="button">close</button><h2>' + esc(D.ids[i]) + "</h2><p>category <b>" +
      esc(D.cats[D.cat[i]]) + "</b>; expected risk <b>" + WORD[D.exp[i]] + "</b>" + (D.origin ? "; origin " + esc(D.origin[i]) : "") +
      "; " + nRight[i] + " of " + D.runs.length + " detectors right</p>";
    const t = D.text ? D.text[i] : null;
    out += t ? textHtml(t) : '<p class="note">The case text is not available (the cases file is missing or changed since the runs).</p>';
    out += "<h2>Replies</h2>";
    for (let k = 0; k < D.runs.length; k++) out += replyHtml(i, k);
    const aside = $("#detail");
    aside.innerHTML = out;
    aside.hidden = false;
    aside.scrollTop = 0;
  }

  function wire() {
    $$("#explorer .filters select").forEach((s) => s.addEventListener("change", apply));
    let timer = null;
    $("#f-text").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, 150); });
    $("#f-reset").addEventListener("click", () => {
      $$("#explorer .filters select").forEach((s) => { s.selectedIndex = 0; });
      $("#f-text").value = "";
      apply();
    });
    $("#more").addEventListener("click", () => { shown += PAGE; draw(); });
    $("#cases thead").addEventListener("click", (ev) => {
      const th = ev.target.closest("th");
      if (!th) return;
      sortDir = sortKey === th.dataset.key ? -sortDir : 1;
      sortKey = th.dataset.key;
      $$("#cases th").forEach((h) => h.classList.remove("asc", "desc"));
      th.classList.add(sortDir > 0 ? "asc" : "desc");
      sortView();
      draw();
    });
    $("#cases tbody").addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (tr) open(Number(tr.dataset.i));
    });
  }

  async function main() {
    const box = $("#explorer");
    if (typeof DecompressionStream === "undefined") {
      box.innerHTML = '<p class="bad">This browser cannot unpack the cases (no DecompressionStream); open the page in a current browser.</p>';
      return;
    }
    ALL = await unpack();
    $("#ds").addEventListener("change", (ev) => choose(Number(ev.target.value)));
    $$("td.hm").forEach((td) => td.addEventListener("click", () => {
      $("#f-cat").value = td.dataset.cat;
      $("#f-set").value = "";
      apply();
      $("#explorer-title").scrollIntoView();
    }));
    $("#detail").addEventListener("click", (ev) => { if (ev.target.classList.contains("close")) $("#detail").hidden = true; });
    document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") $("#detail").hidden = true; });
    choose(0);
    document.body.dataset.readyMs = performance.now().toFixed(0); // for the benchmark: time to a drawn table
    document.body.dataset.ready = "1"; // for tests and benchmarks: the case table is drawn
  }

  main();
})();
