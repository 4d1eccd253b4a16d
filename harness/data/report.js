"use strict";
// The case explorer of report.html. Data: #cases-data holds {runs: [label...], cases: [...], note}, gzip-compressed
// and base64-encoded; each case has id, cat, exp, origin?, p (one prediction per run, or null), case (its text).
(function () {
  const RISKS = ["low", "medium", "high"];
  const KINDS = ["invalid_response", "timeout", "connection", "http_status", "detector_exception"];
  const PAGE = 500; // rows drawn at once; "show more" draws the next ones
  let D = null;
  let view = [];
  let shown = PAGE;
  let sortCol = null;
  let sortDir = 1;
  let columns = [];
  const $ = (sel, el) => (el || document).querySelector(sel);
  const $$ = (sel, el) => Array.from((el || document).querySelectorAll(sel));
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s === null || s === undefined ? "" : s).replace(/[&<>"']/g, (c) => ESC[c]);
  // A case's text comes from its file as it is: every part is read as possibly missing or of another shape.
  const list = (x) => (Array.isArray(x) ? x : []);
  const obj = (x) => (x && typeof x === "object" && !Array.isArray(x) ? x : {});

  async function unpack() {
    const bin = atob($("#cases-data").textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  const predicted = (p) => (p ? p.r || "error" : "not run");
  const right = (c, k) => !!c.p[k] && c.p[k].r === c.exp;
  const ms = (s) => (s === null || s === undefined ? "" : (1000 * s).toFixed(1));

  function haystack(c) {
    if (c.hay === undefined) {
      const parts = [c.id, c.cat];
      if (c.case) {
        const t = obj(c.case);
        parts.push(t.question, t.rationale, t.ground_truth, sourceText(t.source), ...list(t.evidence));
        for (const a of list(t.answers)) parts.push(obj(a).agent_id, obj(a).text);
      }
      for (const p of c.p) if (p) parts.push(p.em, p.e, JSON.stringify(p.resp || ""));
      c.hay = parts.join("\n").toLowerCase();
    }
    return c.hay;
  }

  function buildColumns() {
    columns = [
      { label: "id", get: (c) => c.id },
      { label: "category", get: (c) => c.cat },
      { label: "expected", get: (c) => RISKS.indexOf(c.exp), html: (c) => esc(c.exp) },
    ];
    const many = D.runs.length > 1;
    D.runs.forEach((name, k) => {
      const tag = many ? " (" + (k === 0 ? "base" : "new") + ")" : "";
      columns.push(
        { label: "predicted" + tag, get: (c) => predicted(c.p[k]), html: (c) => esc(predicted(c.p[k])) },
        { label: "score" + tag, get: (c) => (c.p[k] && c.p[k].s !== null ? c.p[k].s : -1),
          html: (c) => (c.p[k] && c.p[k].s !== null && c.p[k].s !== undefined ? Number(c.p[k].s).toFixed(3) : "") },
        { label: "correct" + tag, get: (c) => (right(c, k) ? 1 : 0),
          html: (c) => (right(c, k) ? '<span class="ok">yes</span>' : '<span class="bad">no</span>') },
        { label: "error" + tag, get: (c) => (c.p[k] && c.p[k].e) || "", html: (c) => '<span class="err">' + esc((c.p[k] && c.p[k].e) || "") + "</span>" },
        { label: "latency ms" + tag, get: (c) => (c.p[k] ? c.p[k].l : -1),
          html: (c) => (c.p[k] ? (c.p[k].c ? "cached" : ms(c.p[k].l)) : "") },
      );
    });
  }

  function option(value, text, selected) {
    return '<option value="' + esc(value) + '"' + (selected ? " selected" : "") + ">" + esc(text) + "</option>";
  }

  function select(id, cls, label, options, run) {
    const data = run === undefined ? "" : ' data-run="' + run + '"';
    return '<label>' + esc(label) + ' <select id="' + id + '" class="' + cls + '"' + data + ">" +
      options.map((o) => option(o[0], o[1], o[2])).join("") + "</select></label>";
  }

  function buildFilters() {
    const cats = Array.from(new Set(D.cases.map((c) => c.cat))).sort();
    const kinds = KINDS.filter((k) => D.cases.some((c) => c.p.some((p) => p && p.e === k)));
    let out = '<div class="filters">';
    out += select("f-cat", "f", "category", [["", "any"], ...cats.map((c) => [c, c])]);
    out += select("f-exp", "f", "expected risk", [["", "any"], ...RISKS.map((r) => [r, r])]);
    const many = D.runs.length > 1;
    D.runs.forEach((name, k) => {
      const tag = many ? " (" + (k === 0 ? "base" : "new") + ")" : "";
      out += select("f-pred-" + k, "f f-pred", "predicted" + tag, [["", "any"], ...RISKS.map((r) => [r, r]), ["error", "error"]], k);
      out += select("f-ok-" + k, "f f-ok", "result" + tag, [["", "any"], ["right", "right"], ["wrong", "wrong"]], k);
      out += select("f-err-" + k, "f f-err", "error kind" + tag,
        [["", "any"], ["none", "no error"], ["some", "any error"], ...kinds.map((e) => [e, e])], k);
    });
    if (many) {
      out += select("f-flip", "f", "change", [["flipped", "flipped either way", true], ["r2w", "right to wrong"],
        ["w2r", "wrong to right"], ["", "any"]]);
    }
    out += '<label>text <input id="f-text" class="f" type="search" placeholder="id, question, answer, reply..."></label>';
    out += '<button id="f-reset" type="button">reset</button><span id="count"></span></div>';
    out += '<table id="cases"><thead><tr>' + columns.map((c, i) => '<th data-col="' + i + '">' + esc(c.label) + "</th>").join("") +
      '</tr></thead><tbody></tbody></table><button id="more" type="button" hidden></button>';
    if (D.note) out = '<p class="' + (D.note.startsWith("case text unavailable") ? "bad" : "note") + '">' + esc(D.note) + "</p>" + out;
    return out;
  }

  function value(id) {
    const el = document.getElementById(id);
    return el ? el.value : "";
  }

  function matches(c, f) {
    if (f.cat && c.cat !== f.cat) return false;
    if (f.exp && c.exp !== f.exp) return false;
    for (let k = 0; k < c.p.length; k++) {
      const p = c.p[k];
      if (f.pred[k] && predicted(p) !== f.pred[k]) return false;
      if (f.ok[k] && (f.ok[k] === "right") !== right(c, k)) return false;
      const e = p && p.e;
      if (f.err[k] === "none" ? !!e : f.err[k] === "some" ? !e : f.err[k] && e !== f.err[k]) return false;
    }
    if (f.flip) {
      const a = right(c, 0), b = right(c, 1);
      if (f.flip === "flipped" ? a === b : f.flip === "r2w" ? !(a && !b) : !(!a && b)) return false;
    }
    return !f.text || haystack(c).includes(f.text);
  }

  function apply() {
    const n = D.runs.length;
    const f = {
      cat: value("f-cat"), exp: value("f-exp"), flip: value("f-flip"),
      text: value("f-text").trim().toLowerCase(),
      pred: [], ok: [], err: [],
    };
    for (let k = 0; k < n; k++) {
      f.pred.push(value("f-pred-" + k));
      f.ok.push(value("f-ok-" + k));
      f.err.push(value("f-err-" + k));
    }
    view = [];
    for (let i = 0; i < D.cases.length; i++) if (matches(D.cases[i], f)) view.push(i);
    sortView();
    shown = PAGE;
    draw();
  }

  function sortView() {
    if (sortCol === null) return;
    const get = columns[sortCol].get;
    const keys = new Map(view.map((i) => [i, get(D.cases[i])]));
    view.sort((a, b) => {
      const x = keys.get(a), y = keys.get(b);
      return (x < y ? -1 : x > y ? 1 : a - b) * sortDir;
    });
  }

  function draw() {
    const body = $("#cases tbody");
    body.innerHTML = view.slice(0, shown).map((i) => {
      const c = D.cases[i];
      return '<tr data-i="' + i + '">' + columns.map((col) => "<td>" + (col.html ? col.html(c) : esc(col.get(c))) + "</td>").join("") + "</tr>";
    }).join("");
    $("#count").textContent = view.length + " of " + D.cases.length + " cases";
    const more = $("#more");
    more.hidden = view.length <= shown;
    more.textContent = "show " + Math.min(PAGE, view.length - shown) + " more (of " + (view.length - shown) + " not shown)";
  }

  function reset(keepFlip) {
    $$(".filters select").forEach((s) => { s.selectedIndex = 0; });
    if (!keepFlip && $("#f-flip")) $("#f-flip").value = "";
    $("#f-text").value = "";
  }

  function yesNo(v) {
    return v === true ? '<span class="ok">yes</span>' : v === false ? '<span class="bad">no</span>' : "";
  }

  function predictionHtml(c, p, k) {
    const label = D.runs.length > 1 ? (k === 0 ? "base: " : "new: ") + D.runs[k] : D.runs[k];
    let out = "<h3>Detector: " + esc(label) + "</h3>";
    if (!p) return out + "<p>not run</p>";
    const verdict = right(c, k) ? '<span class="ok">right</span>' : '<span class="bad">wrong</span>';
    out += "<p>predicted <b>" + esc(predicted(p)) + "</b> (" + verdict + ", expected " + esc(c.exp) + ")";
    if (p.s !== null && p.s !== undefined) out += "; score " + esc(p.s);
    out += "; " + (p.c ? "replayed from the cache" : "latency " + ms(p.l) + " ms") + "; attempts " + esc(p.a) + "</p>";
    if (p.e) {
      out += '<p class="err">error: <b>' + esc(p.e) + "</b></p><pre>" + esc(p.em) + "</pre>";
      if (p.tb) out += "<h3>Traceback</h3><pre>" + esc(p.tb) + "</pre>";
      if (p.raw) out += "<h3>Raw reply</h3><pre>" + esc(p.raw) + "</pre>";
    } else {
      if (p.resp && p.resp.reason) out += "<p>reason: " + esc(p.resp.reason) + "</p>";
      out += itemsHtml(p);
      out += "<h3>Whole reply</h3><pre>" + esc(JSON.stringify({ false_consensus_risk: p.r, risk_score: p.s, ...(p.resp || {}) }, null, 2)) + "</pre>";
    }
    return out;
  }

  // A run with --epochs or --probe: each epoch's verdict, and each variant whose verdict differs from the request's.
  function itemsHtml(p) {
    let out = "";
    if (p.ep && p.ep.length > 1) out += "<p>epochs: " + p.ep.map((r) => esc(r === null ? "error" : r)).join(", ") + "</p>";
    if (p.fl && p.fl.length) {
      out += '<h3>Verdict changed under a probe</h3><table class="flips"><thead><tr><th>variant</th><th>epoch</th>' +
        "<th>as it is</th><th>variant</th><th>order sent</th></tr></thead><tbody>" +
        p.fl.map((f) => "<tr><td>" + esc(f.v) + "</td><td>" + esc(f.e) + "</td><td>" + esc(f.from) + "</td><td><b>" +
          esc(f.to) + "</b></td><td>" + (f.perm ? esc(f.perm.map((i) => i + 1).join(", ")) : "") + "</td></tr>").join("") +
        "</tbody></table>";
    }
    return out;
  }

  // A source is "original" or an object naming the public data set and the item a case was built from.
  function sourceText(s) {
    if (!s || typeof s !== "object") return s === null || s === undefined ? "" : String(s);
    const parts = [s.dataset, s.item === undefined || s.item === null ? "" : "item " + s.item];
    return parts.filter((p) => p !== undefined && p !== null && p !== "").join(", ") + (s.license ? " (" + s.license + ")" : "");
  }

  function caseHtml(t) {
    let out = '<h3>Question</h3><div class="pre">' + esc(t.question) + "</div>";
    out += '<h3>Answers</h3><table class="answers"><thead><tr><th>agent</th><th>answer</th><th>correct</th><th>model_family</th>' +
      "<th>saw others</th><th>shared context</th></tr></thead><tbody>" +
      list(t.answers).map((x) => {
        const a = obj(x), m = obj(a.metadata);
        return "<tr><td>" + esc(a.agent_id) + '</td><td class="answer">' + esc(a.text) + "</td><td>" + yesNo(a.correct) +
          "</td><td>" + esc(m.model_family) + "</td><td>" + yesNo(m.saw_other_answers) + "</td><td>" + yesNo(m.shared_context) + "</td></tr>";
      }).join("") +
      "</tbody></table>";
    const evidence = list(t.evidence);
    out += "<h3>Evidence</h3>" + (evidence.length ? "<ul>" + evidence.map((e) => "<li>" + esc(e) + "</li>").join("") + "</ul>" : "<p>(none)</p>");
    out += "<h3>Ground truth</h3><p>" + esc(t.ground_truth) + "</p><p>majority correct: " + esc(t.majority_correct) + "</p>";
    out += "<h3>Rationale</h3><p>" + esc(t.rationale) + "</p>";
    out += '<p class="note">source ' + esc(sourceText(t.source)) + "; tags " + esc(list(t.tags).join(", ")) + "</p>";
    return out;
  }

  function open(i) {
    const c = D.cases[i];
    $$("#cases tbody tr.sel").forEach((tr) => tr.classList.remove("sel"));
    const tr = $('#cases tbody tr[data-i="' + i + '"]');
    if (tr) tr.classList.add("sel");
    let out = '<button class="close" type="button">close</button><h2>' + esc(c.id) + "</h2>";
    out += "<p>category <b>" + esc(c.cat) + "</b>; expected risk <b>" + esc(c.exp) + "</b>" + (c.origin ? "; origin " + esc(c.origin) : "") + "</p>";
    if (!c.case) {
      out += '<p class="note">The case text is not available (the cases file is missing, changed since the run, or no longer holds this case).</p>';
    } else {
      try {
        out += caseHtml(obj(c.case));
      } catch (err) {  // never leave the panel closed: the predictions below are shown whatever the text holds
        out += '<p class="bad">The case text could not be shown: ' + esc(err) + "</p>";
      }
    }
    c.p.forEach((p, k) => { out += predictionHtml(c, p, k); });
    const aside = $("#detail");
    aside.innerHTML = out;
    aside.hidden = false;
    aside.scrollTop = 0;
  }

  function cellClick(td) {
    reset(false);
    $("#f-exp").value = td.dataset.exp;
    $("#f-pred-" + td.dataset.run).value = td.dataset.pred;
    apply();
    $("#explorer-title").scrollIntoView();
  }

  function wire() {
    $$(".filters select").forEach((s) => s.addEventListener("change", apply));
    let timer = null;
    $("#f-text").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, 150); });
    $("#f-reset").addEventListener("click", () => { reset(true); apply(); });
    $("#more").addEventListener("click", () => { shown += PAGE; draw(); });
    $("#cases thead").addEventListener("click", (ev) => {
      const th = ev.target.closest("th");
      if (!th) return;
      const col = Number(th.dataset.col);
      sortDir = sortCol === col ? -sortDir : 1;
      sortCol = col;
      $$("#cases th").forEach((h) => h.classList.remove("asc", "desc"));
      th.classList.add(sortDir > 0 ? "asc" : "desc");
      sortView();
      draw();
    });
    $("#cases tbody").addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (tr) open(Number(tr.dataset.i));
    });
    $("#detail").addEventListener("click", (ev) => { if (ev.target.classList.contains("close")) $("#detail").hidden = true; });
    document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") $("#detail").hidden = true; });
    $$("td.cell").forEach((td) => td.addEventListener("click", () => cellClick(td)));
  }

  async function main() {
    const box = $("#explorer");
    if (typeof DecompressionStream === "undefined") {
      box.innerHTML = '<p class="bad">This browser cannot unpack the cases (no DecompressionStream); open the page in a current browser.</p>';
      return;
    }
    D = await unpack();
    buildColumns();
    box.innerHTML = buildFilters();
    wire();
    apply();
    document.body.dataset.readyMs = performance.now().toFixed(0); // for the benchmark: time to a drawn explorer
    document.body.dataset.ready = "1"; // for tests and benchmarks: the explorer is drawn
  }

  main();
})();
