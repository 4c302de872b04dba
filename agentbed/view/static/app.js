// agentbed view: a single page over the server's JSON API. No framework, nothing fetched from
// elsewhere. Every route polls its data each second (ETag: unchanged data costs a 304) and
// re-renders only the parts that changed, so filters and half-typed text survive the updates.
"use strict";

const POLL_MS = 1000;
const TOKEN = new URLSearchParams(location.search).get("token");
// the per-server secret every state-changing request carries (the server wrote it into this page)
const SECRET = (document.querySelector('meta[name="agentbed-secret"]') || {}).content || "";
const etags = new Map();
const cache = new Map();
let route = null;
let timer = null;
const state = {filters: {}, offset: 0};

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return el;
}

function svg(markup) {  // plots are drawn by the server (agentbed.report.plots), escaped there
  const box = h("div", {class: "plot-box"});
  box.innerHTML = markup || "";
  return box;
}

async function get(path) {
  const headers = {"X-Agentbed-Secret": SECRET};  // /api/replay asks for it (it re-executes an episode)
  if (TOKEN) headers["X-Agentbed-Token"] = TOKEN;
  if (etags.has(path)) headers["If-None-Match"] = etags.get(path);
  const resp = await fetch(path, {headers, cache: "no-store"});
  if (resp.status === 304) return {data: cache.get(path), changed: false};
  const data = await resp.json();
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  etags.set(path, resp.headers.get("ETag"));
  cache.set(path, data);
  return {data, changed: true};
}

async function post(path, body) {
  const headers = {"Content-Type": "application/json", "X-Agentbed-Secret": SECRET};
  if (TOKEN) headers["X-Agentbed-Token"] = TOKEN;
  const resp = await fetch(path, {method: "POST", headers, body: JSON.stringify(body)});
  const data = await resp.json();
  if (!resp.ok) throw new Error(data.error || resp.statusText);
  return data;
}

const q = (params) => Object.entries(params).filter(([, v]) => v !== "" && v !== undefined && v !== null)
  .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
const link = (...parts) => "#/" + parts.map(encodeURIComponent).join("/");
const fmt = (v, digits = 3) => v === null || v === undefined ? "–" :
  (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : String(v));
const usd = (v) => v === null || v === undefined ? "–" : "$" + v.toFixed(4);

function banner(text) {
  const el = document.getElementById("banner");
  el.textContent = text || "";
  el.classList.toggle("hidden", !text);
}

function problemsBlock(problems) {
  if (!problems || !problems.length) return null;
  return h("div", {class: "problems", id: "problems"}, h("h3", {}, `${problems.length} problem(s) reading files`),
    h("ul", {}, problems.map((p) => h("li", {}, h("code", {}, p.file || ""), ": ", p.message || String(p)))));
}

const SECTIONS = {runs: ["runs"], run: ["run-head", "findings", "workloads", "heatmap", "filters", "episodes"],
  episode: ["episode-head", "transcript", "tree"], approvals: ["approvals"]};

function replaceSection(id, el) {  // each page's sections keep their place (placeholders made by navigate)
  const next = el || h("div", {class: "placeholder"});
  next.id = id;
  const old = document.getElementById(id);
  if (old) old.replaceWith(next);
  else document.getElementById("main").appendChild(next);
}

// -- runs list ----------------------------------------------------------------------------------
function countsText(counts) {
  return Object.entries(counts).sort().map(([k, v]) => `${k} ${v}`).join(", ");
}

function renderRuns(doc) {
  document.getElementById("root").textContent = doc.root;
  const rows = doc.runs.map((r) => h("tr", {class: r.live ? "live" : "", "data-run": r.id},
    h("td", {}, h("a", {href: link("run", r.id)}, r.id)),
    h("td", {}, r.suite), h("td", {}, r.agents.join(", ")),
    h("td", {class: "num"}, r.planned ? `${r.finished}/${r.planned}` : String(r.finished)),
    h("td", {}, countsText(r.counts)),
    h("td", {class: "num" + (r.errors ? " bad" : "")}, r.errors),
    h("td", {class: "num"}, r.finished ? fmt(r.successes / Math.max(1, r.finished)) : "–"),
    h("td", {class: "num"}, usd(r.cost)),
    h("td", {class: r.seal_state === "failed" || r.seal_state === "malformed" ? "bad" : ""}, r.seal),
    h("td", {class: "num" + (r.problems ? " bad" : "")}, r.problems),
    h("td", {}, r.live ? h("span", {class: "pill live"}, "running") : "")));
  const table = h("table", {id: "runs-table"},
    h("thead", {}, h("tr", {}, ["run", "suite", "agents", "finished", "episodes by status", "errors",
      "success", "cost", "seal", "problems", ""].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows));
  replaceSection("runs", h("section", {}, h("h2", {}, `Runs (${doc.runs.length})`),
    doc.runs.length ? table : h("p", {}, "No run directories here yet; they appear as soon as one is started.")));
}

// -- one run ------------------------------------------------------------------------------------
function renderRunHead(doc) {
  const r = doc.run;
  const facts = h("p", {class: "facts"}, `${r.suite} · agents ${r.agents.join(", ")} · ${r.finished}` +
    (r.planned ? ` of ${r.planned}` : "") + ` episodes finished · ${countsText(r.counts)} · cost ${usd(r.cost)} · ` +
    r.seal, r.command ? h("code", {class: "command"}, r.command) : null);
  replaceSection("run-head", h("section", {}, h("h2", {}, h("a", {href: "#/"}, "runs"), " / ", r.id), facts,
    r.planned ? h("progress", {max: r.planned, value: r.finished}) : null, problemsBlock(doc.problems)));
  const findings = doc.forest || doc.findings_text.length ? h("section", {},
    h("h3", {}, "Headline findings"), doc.forest ? svg(doc.forest) : null,
    doc.findings_text.length ? h("table", {}, h("tbody", {}, doc.findings_text.map((f) => h("tr", {},
      h("td", {}, f.suite), h("td", {}, f.label), h("td", {}, String(f.value)), h("td", {}, f.paper || "–"),
      h("td", {}, f.note || ""))))) : null) : null;
  replaceSection("findings", findings);
  replaceSection("heatmap", doc.heatmap ? h("section", {}, h("h3", {}, "Agents x tasks"), svg(doc.heatmap)) : null);
  replaceSection("workloads", workloadsBlock(doc.workloads || {}));
}

// Each workload summary's plots and tables (agentbed.view.summaries): every cell, title and note
// as a text node; the only markup is SVG the server drew from numbers (agentbed.report.scatter).
function workloadsBlock(workloads) {
  const parts = Object.entries(workloads).filter(([, w]) => w.figures.length || w.tables.length || w.problems.length)
    .map(([suite, w]) => h("section", {class: "workload", "data-suite": suite},
      h("h3", {}, w.title || suite, " ", h("code", {}, `(${suite})`)),
      w.problems.length ? problemsBlock(w.problems.map((m) => ({file: `${suite}/summary.json`, message: m}))) : null,
      w.figures.map((f) => h("figure", {class: "summary-figure"}, h("figcaption", {}, f.title),
        f.svg ? svg(f.svg) : null, f.note ? h("p", {class: "note"}, f.note) : null)),
      w.tables.map((t) => h("details", {class: "summary-table", open: true}, h("summary", {}, t.title +
        (t.total_rows > t.rows.length ? ` (first ${t.rows.length} of ${t.total_rows} rows)` : "")),
        h("table", {}, h("thead", {}, h("tr", {}, t.columns.map((c) => h("th", {}, c)))),
          h("tbody", {}, t.rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c)))))),
        t.note ? h("p", {class: "note"}, t.note) : null))));
  return parts.length ? h("section", {}, parts) : null;
}

function filterBar(facets, onchange) {
  const select = (name, values) => h("label", {}, name + " ",
    h("select", {name, id: "filter-" + name, onchange},
      h("option", {value: ""}, "all"), values.map((v) => h("option", {value: v, selected: state.filters[name] === v},
        v))));
  return h("div", {class: "filters", id: "filters"},
    select("agent", facets.agent), select("task", facets.task), select("status", facets.status),
    select("label", facets.label), select("success", ["true", "false"]),
    h("input", {type: "search", id: "filter-q", name: "q", placeholder: "search id, error, label",
      value: state.filters.q || "", oninput: onchange}));
}

function readFilters() {
  const out = {};
  for (const el of document.querySelectorAll("#filters select, #filters input")) out[el.name] = el.value;
  return out;
}

function renderEpisodes(runId, doc) {
  const rows = doc.rows.map((e) => h("tr", {class: "status-" + e.status, "data-episode": e.id},
    h("td", {}, h("a", {href: link("run", runId, "episode", e.id)}, e.id)),
    h("td", {}, e.agent), h("td", {}, e.task), h("td", {class: "num"}, fmt(e.seed)),
    h("td", {}, h("span", {class: "pill " + e.status}, e.status)),
    h("td", {}, e.success ? "yes" : "no"), h("td", {}, e.labels.join(", ")),
    h("td", {class: "num"}, fmt(e.steps)), h("td", {class: "num"}, fmt(e.tokens)),
    h("td", {class: "num"}, usd(e.cost)), h("td", {class: "error"}, e.error)));
  const pager = h("div", {class: "pager"}, `${doc.matched} of ${doc.total} episodes match`,
    doc.offset > 0 ? h("button", {onclick: () => { state.offset = Math.max(0, doc.offset - 200); tick(true); }},
      "previous") : null,
    doc.offset + doc.rows.length < doc.matched ? h("button", {onclick: () => { state.offset = doc.offset + 200;
      tick(true); }}, "next") : null,
    doc.matched ? ` (showing ${doc.offset + 1}–${doc.offset + doc.rows.length})` : "");
  replaceSection("episodes", h("section", {}, pager, h("table", {id: "episodes-table"},
    h("thead", {}, h("tr", {}, ["episode", "agent", "task", "seed", "status", "success", "labels", "steps",
      "tokens", "cost", "error"].map((c) => h("th", {}, c)))), h("tbody", {}, rows))));
}

// -- one episode --------------------------------------------------------------------------------
function pre(text, cls) { return h("pre", {class: cls || ""}, text === null || text === undefined ? "" : String(text)); }

function controlBadge(control) {
  if (!control) return null;
  const d = control.decision;
  const who = d ? ` by ${d.author} (${d.by}, via ${d.via}, ${fmt(d.latency_seconds, 1)} s)` : "";
  return h("div", {class: "control kind-" + control.kind},
    h("strong", {}, `controller: ${control.kind}`), who, control.reason ? ` — ${control.reason}` : "",
    control.proposed ? h("div", {}, "proposed: ", h("code", {}, String(control.proposed))) : null);
}

// Every oversight decision of the episode in one table (agentbed.decisions, the record replay and
// the report show): what happened to the proposed action, who decided, why. All text goes in as
// text nodes: the reason is an overseer's own words, the actions an agent's.
function decisionsTable(decisions) {
  if (!decisions || !decisions.length) return null;
  const outcome = (d) => d.kind === "handover" ? `to ${d.agent || "?"}` + (d.executed !== null ? `: ${d.executed}` : "") :
    d.executed === null ? "nothing ran" : d.executed === d.proposed ? "ran as proposed" : d.executed;
  return h("section", {id: "decisions"}, h("h3", {}, `oversight decisions (${decisions.length})`),
    h("table", {}, h("thead", {}, h("tr", {}, ["step", "decision", "by", "why", "proposed", "what ran"].map(
      (c) => h("th", {}, c)))), h("tbody", {}, decisions.map((d) => h("tr", {class: "decision kind-" + d.kind},
      h("td", {class: "num"}, h("a", {href: "#", onclick: (e) => { e.preventDefault();
        const el = document.getElementById("step-" + d.step); if (el) el.scrollIntoView(); }}, String(d.step))),
      h("td", {class: "verb"}, d.verb), h("td", {class: "by"}, d.by), h("td", {class: "why"}, pre(d.reason)),
      h("td", {}, pre(d.proposed)), h("td", {}, pre(outcome(d))))))));
}

function compactJson(value) {  // one line when short, indented when long
  const line = JSON.stringify(value);
  return line && line.length <= 100 ? line : JSON.stringify(value, null, 1);
}

function stepCard(step, prevClock, startClock, firstPrompt) {
  const call = step.tool_call;
  const usage = step.usage ? `tokens ${fmt(step.usage.input_tokens)} in / ${fmt(step.usage.output_tokens)} out` +
    (step.cost !== null && step.cost !== undefined ? ` · ${usd(step.cost)}` : "") : "no model call";
  return h("div", {class: "step", id: "step-" + step.i, "data-step": step.i},
    h("div", {class: "step-head"}, h("strong", {}, `step ${step.i}`), ` · ${step.agent || ""} · virtual clock ` +
      `t+${fmt(step.clock - startClock, 1)} s (+${fmt(step.clock - prevClock, 1)}) · reward ${fmt(step.reward)} · ${usage}` +
      (step.risk !== null && step.risk !== undefined ? ` · risk ${fmt(step.risk, 2)}` : "") +
      (step.terminated ? " · terminated" : "") + (step.truncated ? " · truncated" : "")),
    step.system_prompt && step.system_prompt !== firstPrompt ? h("div", {class: "system"},
      h("span", {class: "role"}, "system prompt, changed from here"), pre(step.system_prompt)) : null,
    step.messages.length ? h("div", {class: "messages"}, step.messages.map((m) => h("div", {class: "msg " + m.role},
      h("span", {class: "role"}, m.role), pre(m.content)))) : null,
    call ? h("div", {class: "tool-call"}, h("span", {class: "tool-name"}, call.tool),
      pre(compactJson(call.arguments), "args")) : h("div", {class: "tool-call raw"}, pre(step.action)),
    controlBadge(step.control),
    h("div", {class: "observation"}, h("span", {class: "role"}, "observation"), pre(step.observation)));
}

function diffLines(a, b) {  // a plain line diff (LCS) of two pretty-printed records
  const x = a.split("\n"), y = b.split("\n");
  const n = x.length, m = y.length, dp = Array.from({length: n + 1}, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { out.push([" ", x[i]]); i++; j++; }
    else if (j < m && (i === n || dp[i][j + 1] >= dp[i + 1][j])) { out.push(["+", y[j]]); j++; }
    else { out.push(["-", x[i]]); i++; }
  }
  return h("pre", {class: "diff"}, out.map(([s, t]) => h("div", {class: s === "+" ? "add" : s === "-" ? "del" : ""},
    `${s} ${t}`)));
}

async function replay(runId, episodeId) {
  const box = document.getElementById("replay-result");
  box.textContent = "re-executing in memory…";
  try {
    const {data} = await get("/api/replay?" + q({run: runId, episode: episodeId, t: Date.now()}));
    box.replaceChildren(data.error ? h("p", {class: "bad"}, data.error) : data.identical ?
      h("p", {class: "ok"}, `replay identical: ${data.records} records`) :
      h("div", {}, h("p", {class: "bad"}, data.message), h("p", {}, "recorded (−) vs replayed (+):"),
        diffLines(JSON.stringify(data.recorded, null, 1) || "", JSON.stringify(data.replayed, null, 1) || "")));
  } catch (err) { box.textContent = String(err); }
}

function renderTree(doc, runId) {
  const tree = doc.tree;
  const parent = doc.parent;
  if ((!tree || !tree.checkpoints.length) && !parent) return null;
  return h("section", {class: "tree"}, h("h3", {}, "Oversight branches"),
    parent ? h("p", {}, "branched from ", h("a", {href: link("run", runId, "episode", parent.episode_id)},
      parent.episode_id), ` at step ${parent.at_step}`) : null,
    tree && tree.checkpoints.length ? h("ul", {class: "checkpoints"}, tree.checkpoints.map((c) => h("li", {},
      h("strong", {}, `checkpoint after step ${c.at_step}`), h("ul", {}, c.branches.map((b) => h("li", {},
        h("span", {class: "pill " + b.status}, b.status), ` ${b.agent}: success ${b.success}${scoresText(b.scores, ", ")},` +
        ` reward ${fmt(b.reward)},` +
        ` ${fmt(b.steps)} steps `, h("code", {}, b.file))))))) : null);
}

// utility and attack success beside success (agentbed/env.py OUTCOME_SCORES), for suites whose outcome has them
function scoresText(scores, sep) {
  return ["utility", "attack_success"].filter((k) => scores && scores[k] !== undefined)
    .map((k) => `${sep}${k.replace("_", " ")} ${scores[k]}`).join("");
}

function renderEpisode(runId, doc) {
  const t = doc.transcript;
  const row = doc.row;
  const head = h("section", {}, h("h2", {}, h("a", {href: "#/"}, "runs"), " / ", h("a", {href: link("run", runId)},
    runId), " / ", row.id),
    h("p", {class: "facts"}, `${row.agent} on ${row.task}, seed ${row.seed} · `, h("span", {class: "pill " +
      row.status}, row.status), ` · success ${row.success}${scoresText(row.scores, " · ")} · log ${doc.check}`),
    doc.problems.length ? problemsBlock(doc.problems.map((m) => ({file: row.log, message: m}))) : null,
    h("button", {id: "replay-button", onclick: () => replay(runId, row.id)}, "replay and compare"),
    h("div", {id: "replay-result"}));
  replaceSection("episode-head", head);
  if (!t) { replaceSection("transcript", h("p", {}, "No readable records yet.")); return; }
  const start = t.header.clock || 0;
  let clock = start;
  const steps = t.steps.map((s) => { const card = stepCard(s, clock, start, t.system_prompt); clock = s.clock; return card; });
  const footer = t.footer ? h("div", {class: "footer-record"}, h("strong", {}, `verdict: ${t.footer.status}`),
    ` · success ${t.footer.success}${scoresText(t.footer.metrics, " · ")} · return ${fmt(t.footer.total_reward)}` +
    ` · ${t.footer.steps} steps · ` +
    `${fmt(t.footer.virtual_seconds, 1)} virtual s · ${t.footer.tokens} tokens`,
    t.footer.stop_reason ? ` · stop: ${t.footer.stop_reason}` : "",
    h("div", {}, "labels: ", t.footer.labels.join(", ") || "–"),
    h("div", {}, "metrics: ", h("code", {}, JSON.stringify(t.footer.metrics))),
    t.footer.error ? pre(t.footer.error, "error") : null) : h("div", {class: "footer-record running"},
    "running: no footer yet");
  replaceSection("transcript", h("section", {},
    t.system_prompt ? h("div", {class: "system"}, h("span", {class: "role"}, "system prompt"), pre(t.system_prompt)) :
      (t.header.agent || {}).system_prompt_sha256 ? h("div", {class: "system"}, h("span", {class: "role"},
        "system prompt"), ` this log (written before prompts were recorded) keeps its SHA-256 only: ` +
        `${t.header.agent.system_prompt_sha256.slice(0, 16)}…`) : null,
    h("details", {}, h("summary", {}, `tools (${t.header.tools.length})`),
      h("ul", {}, t.header.tools.map((tool) => h("li", {}, h("code", {}, tool.name), " ", tool.description || "")))),
    decisionsTable(doc.transcript.decisions),
    h("div", {class: "observation first"}, h("span", {class: "role"}, "first observation"), pre(t.header.observation)),
    steps, t.controls.map((c) => h("div", {class: "control-record"}, h("strong", {}, `before step ${c.i}: `),
      controlBadge({...c.verdict, proposed: c.proposed}))), footer));
  replaceSection("tree", renderTree(doc, runId));
}

// -- approvals ----------------------------------------------------------------------------------
function approvalCard(r) {
  if (r.problem) return h("div", {class: "approval bad"}, r.problem);
  const decide = async (body) => {
    try { await post("/api/decide", {key: r.key, author: "viewer", ...body}); tick(true); }
    catch (err) { alert(err.message); }
  };
  const edit = h("textarea", {rows: 3, class: "edit", name: "edit"}, r.proposed);
  const agent = h("select", {name: "agent"}, (r.agents || []).map((a) => h("option", {value: a}, a)));
  return h("div", {class: "approval", "data-key": r.key},
    h("div", {}, h("strong", {}, `${r.episode_id} · step ${r.step}`), ` · ${r.flagged} · ${fmt(r.seconds_left, 0)} s` +
      " left before the timeout policy decides"),
    h("div", {class: "observation"}, h("span", {class: "role"}, "observation"), pre(r.observation)),
    h("div", {class: "tool-call"}, h("span", {class: "role"}, `proposed by ${r.agent}`), pre(r.proposed)),
    h("div", {class: "actions"},
      h("button", {class: "approve", onclick: () => decide({decision: "approve"})}, "approve"),
      h("button", {class: "reject", onclick: () => decide({decision: "reject"})}, "reject"),
      edit, h("button", {class: "edit-button", onclick: () => decide({decision: "edit", action: edit.value})}, "run edited"),
      agent, h("button", {class: "handover", onclick: () => decide({decision: "handover", agent: agent.value})},
        "hand the step over")));
}

function renderApprovals(doc) {
  replaceSection("approvals", h("section", {}, h("h2", {}, "Approvals"),
    !doc.enabled ? h("p", {}, "Start the viewer with --approvals DIR (the run's --approvals) to answer questions.") :
      doc.pending.length ? doc.pending.map(approvalCard) : h("p", {}, `No question waiting in ${doc.folder}.`)));
}

// -- routing and polling ------------------------------------------------------------------------
function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "run" && parts[2] === "episode") return {page: "episode", run: parts[1], episode: parts[3]};
  if (parts[0] === "run") return {page: "run", run: parts[1]};
  if (parts[0] === "approvals") return {page: "approvals"};
  return {page: "runs"};
}

async function tick(force) {
  clearTimeout(timer);
  try {
    const runs = await get("/api/runs");
    const pending = (runs.data.approvals || []).length;
    const badge = document.getElementById("approvals-badge");
    badge.textContent = `${pending} approval(s) waiting`;
    badge.classList.toggle("hidden", !pending);
    if (route.page === "runs" && (runs.changed || force)) renderRuns(runs.data);
    if (route.page === "run") {
      const run = await get("/api/run?" + q({run: route.run}));
      if (run.changed || force) {
        renderRunHead(run.data);
        if (!document.getElementById("filter-q")) {
          replaceSection("filters", filterBar(run.data.facets, () => { state.filters = readFilters(); state.offset = 0;
            tick(true); }));
        }
      }
      const eps = await get("/api/episodes?" + q({run: route.run, ...state.filters, offset: state.offset}));
      if (eps.changed || force) renderEpisodes(route.run, eps.data);
    }
    if (route.page === "episode") {
      const ep = await get("/api/episode?" + q({run: route.run, episode: route.episode}));
      if (ep.changed || force) renderEpisode(route.run, ep.data);
    }
    if (route.page === "approvals") {
      const ap = await get("/api/approvals");
      if (ap.changed || force) renderApprovals(ap.data);
    }
    banner("");
    document.getElementById("live").className = "on";
  } catch (err) {
    banner(`cannot reach the viewer's data: ${err.message}`);
    document.getElementById("live").className = "off";
  }
  timer = setTimeout(() => tick(false), POLL_MS);
}

function navigate() {
  route = parseRoute();
  state.filters = {};
  state.offset = 0;
  document.getElementById("main").replaceChildren(...SECTIONS[route.page].map((id) =>
    h("div", {id, class: "placeholder"})));
  tick(true);
}

window.addEventListener("hashchange", navigate);
navigate();
