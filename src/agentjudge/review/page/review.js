/* agentjudge review page. Everything from the results (task, steps, tool calls, rationale)
   is set with textContent: trajectory text is never markup. The server keeps the labels;
   every action is one API call, written to the labels file before the page shows it. */
"use strict";

const state = { review: null, index: 0, item: null, labels: {} };
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, { credentials: "same-origin", ...init });
  if (!response.ok) throw new Error(`${response.status}: ${(await response.text()).trim()}`);
  return response.json();
}

function say(text, bad) {
  const status = $("status");
  status.textContent = text;
  status.className = bad ? "bad" : "";
}

function fmt(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(3);
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

function row(list, term, value, key) {
  const dt = el("dt", term);
  const dd = el("dd", fmt(value));
  if (key) dd.dataset.field = key;
  list.append(dt, dd);
  return dd;
}

/* a terminal's output often ends in screens of blank lines: not worth the scrolling */
function trimmed(text) {
  return text.replace(/\s+$/, "");
}

/* 1-5 onto the judge's scale: 1 its low end, 5 its high end */
function scaled(digit, scale) {
  return scale[0] + ((digit - 1) * (scale[1] - scale[0])) / 4;
}

function showProgress() {
  const review = state.review;
  const done = review.items.filter((it) => it.key in state.labels).length;
  $("progress").textContent =
    `item ${state.index + 1} of ${review.items.length} · labelled ${done}`;
  $("progress").dataset.index = String(state.index);
  $("progress").dataset.labelled = String(done);
}

function showItem() {
  const item = state.item;
  const review = state.review;
  document.body.dataset.key = item.key;
  const where = $("where");
  where.replaceChildren();
  where.append(el("span", review.parts[item.part] || item.part, `part ${item.part}`));
  where.lastChild.dataset.part = item.part;
  const place = item.kind === "step"
    ? `${item.root}${item.node ? ` › ${item.node}` : ""} · step ${item.step_id}`
    : `${item.root} · ${item.metric}`;
  where.append(el("span", place, "place"));
  if (item.agent) where.append(el("span", `by ${item.agent}`, "agent"));
  $("task").textContent = item.task || "–";
  $("context-title").textContent =
    item.kind === "step" ? "Trajectory up to the step" : "The case's turns";
  const context = $("context");
  context.replaceChildren();
  item.context.forEach((step, i) => {
    const li = el("li", null, `step ${step.source}`);
    if (i === item.context.length - 1 && item.kind === "step") li.classList.add("current");
    li.dataset.stepId = String(step.step_id);
    li.append(el("div", `step ${step.step_id} · ${step.source}`, "who"));
    if (step.text) li.append(el("pre", trimmed(step.text), "text message"));
    step.tool_calls.forEach((call) => li.append(el("pre", trimmed(call), "text call")));
    step.observations.forEach((seen) => li.append(el("pre", trimmed(seen), "text observation")));
    context.append(li);
  });
  const current = context.querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
  const verdict = $("verdict");
  verdict.replaceChildren();
  row(verdict, "score", item.score, "score");
  row(verdict, "threshold", item.threshold);
  row(verdict, "scale", `${fmt(item.scale[0])} – ${fmt(item.scale[1])}`);
  row(verdict, "samples", item.samples.length ? item.samples.map(fmt).join(", ") : null);
  row(verdict, "category", item.category, "category");
  if (item.sample_categories.length) row(verdict, "samples' categories", item.sample_categories.join(", "));
  if (item.kind === "step") row(verdict, "decisive", item.decisive);
  $("rationale").textContent = item.rationale || "–";
  showLabel();
  showProgress();
  document.body.dataset.ready = String(state.index);
}

function showLabel() {
  const item = state.item;
  const label = state.labels[item.key];
  const answer = $("answer");
  answer.replaceChildren();
  const passed = row(answer, "passes", label ? label.passed : null, "passed");
  if (label && label.passed !== null) passed.className = label.passed ? "good" : "bad";
  row(answer, "score", label ? label.score : null, "score");
  row(answer, "category", label ? label.category : null, "category");
  row(answer, "labelled", label ? `${label.at} by ${label.reviewer}` : null);
  const note = $("note");
  if (document.activeElement !== note) note.value = label && label.note ? label.note : "";
  $("label").dataset.labelled = label ? "yes" : "no";
}

async function go(index) {
  const count = state.review.items.length;
  if (count === 0) return;
  const target = Math.max(0, Math.min(count - 1, index));
  state.item = await api(`api/items/${target}`);
  state.index = target;
  history.replaceState(null, "", `#${target}`);
  showItem();
}

async function put(fields) {
  try {
    const answer = await api("api/labels", { key: state.item.key, ...fields });
    state.labels[answer.label.key] = answer.label;
    showLabel();
    showProgress();
    say("saved");
  } catch (error) {
    say(`not saved: ${error.message}`, true);
  }
}

async function undo() {
  try {
    const answer = await api("api/undo", {});
    state.labels = answer.labels;
    if (answer.undone === null) {
      say("nothing to undo");
      return;
    }
    const back = state.review.items.findIndex((it) => it.key === answer.undone);
    if (back >= 0 && back !== state.index) await go(back);
    else showLabel();
    showProgress();
    say("undone");
  } catch (error) {
    say(`not undone: ${error.message}`, true);
  }
}

/* Keys act one after the other, each once the one before has finished (its item loaded,
   its label written): a fast "j y j y" labels the items it means. */
let queue = Promise.resolve();
function later(action) {
  queue = queue.then(action).catch((error) => say(error.message, true));
}

/* the category picker: a numbered list; number, arrows + Enter, 0 clears, Esc closes */
const picker = { open: false, at: 0 };

function openPicker() {
  const choices = $("choices");
  choices.replaceChildren();
  const current = (state.labels[state.item.key] || {}).category;
  picker.at = 0;
  state.review.categories.forEach((name, i) => {
    const li = el("li", name);
    li.dataset.category = name;
    li.addEventListener("click", () => {  // the mouse works too
      closePicker();
      later(() => put({ category: name }));
    });
    if (name === current) picker.at = i;
    choices.append(li);
  });
  picker.open = true;
  $("picker").hidden = false;
  markPicked();
}

function markPicked() {
  [...$("choices").children].forEach((li, i) => li.classList.toggle("at", i === picker.at));
}

function closePicker() {
  picker.open = false;
  $("picker").hidden = true;
}

async function pickerKey(k) {
  const names = state.review.categories;
  if (k === "Escape") closePicker();
  else if (k === "ArrowDown" || k === "j") picker.at = (picker.at + 1) % names.length;
  else if (k === "ArrowUp" || k === "k") picker.at = (picker.at + names.length - 1) % names.length;
  else if (k === "Enter") { closePicker(); await put({ category: names[picker.at] }); }
  else if (k === "0") { closePicker(); await put({ category: null }); }
  else if (/^[1-9]$/.test(k) && Number(k) <= names.length) {
    closePicker();
    await put({ category: names[Number(k) - 1] });
  }
  if (picker.open) markPicked();
}

async function command(k) {
  if (picker.open) return pickerKey(k);
  if (k === "j" || k === "ArrowRight") await go(state.index + 1);
  else if (k === "k" || k === "ArrowLeft") await go(state.index - 1);
  else if (k === "y" || k === "n") await put({ passed: k === "y" });
  else if (/^[1-5]$/.test(k)) await put({ score: scaled(Number(k), state.item.scale) });
  else if (k === "c") openPicker();
  else if (k === "u") await undo();
}

const KEYS = /^([jkyncu0-9]|ArrowLeft|ArrowRight|ArrowUp|ArrowDown|Enter|Escape)$/;

function noteKey(event) {
  const note = $("note");
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    const text = note.value;
    note.blur();
    later(() => put({ note: text }));
  } else if (event.key === "Escape") {
    event.preventDefault();
    note.blur();
    showLabel();
  }
}

function key(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !state.item) return;
  if (event.target === $("note")) return noteKey(event);
  const k = event.key;
  if (k === "e" && !picker.open) {
    event.preventDefault();
    $("note").focus();
    return;
  }
  if (!KEYS.test(k)) return;
  if (!/^Arrow(Up|Down)$/.test(k) || picker.open) event.preventDefault();
  later(() => command(k));
}

async function start() {
  try {
    const review = await api("api/state");
    state.review = review;
    state.labels = review.labels;
    $("files").textContent =
      `${review.results} → ${review.labels_file} · reviewer ${review.reviewer}`;
    if (review.stale.length) {
      const stale = $("stale");
      stale.textContent = `${review.stale.length} label(s) in ${review.labels_file} name items ` +
        `these results no longer have; they are kept: ${review.stale.join(", ")}`;
      stale.hidden = false;
    }
    document.addEventListener("keydown", key);
    const asked = Number.parseInt(location.hash.slice(1), 10);
    if (review.items.length === 0) {
      say("these results have nothing to review");
      document.body.dataset.ready = "empty";
      return;
    }
    await go(Number.isInteger(asked) ? asked : review.start);
  } catch (error) {
    say(`cannot load the review: ${error.message}`, true);
  }
}

start();
