// The chat page: plain DOM. Answers and quoted passages are Markdown, rendered by marked with every raw
// HTML tag in them escaped (shown as the characters it is) and then kept to the elements Markdown makes by
// DOMPurify (both shipped in static/, see VENDORED.md); every other text is set with textContent. Model and
// passage text never becomes markup that runs.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { thread: null, turns: 0, waiting: null, busy: false };

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = localStorage.getItem("mtrag-api-key");
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

async function askKey() {
  const dialog = $("key-dialog");
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener("close", resolve, { once: true }));
  localStorage.setItem("mtrag-api-key", $("key-input").value.trim());
}

async function api(method, path, body) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const response = await fetch(path, { method, headers: headers(), body: body ? JSON.stringify(body) : undefined });
    if (response.status === 401) { await askKey(); continue; }
    return response;
  }
  throw new Error("no valid API key");
}

async function detail(response) {
  try { return (await response.json()).detail || response.statusText; } catch { return response.statusText; }
}

function notice(text) {
  $("notice").textContent = text || "";
  $("notice").hidden = !text;
}

function showStep(label) {
  $("step").textContent = label || "";
  $("step").hidden = !label;
}

// -- Markdown -------------------------------------------------------------------------------------

const MARKDOWN_TAGS = ["p", "br", "strong", "em", "del", "code", "pre", "ul", "ol", "li", "blockquote", "hr",
  "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td"];
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const markdown = new window.marked.Marked({
  gfm: true,
  async: false,
  renderer: { html: (token) => token.text.replace(/[&<>"']/g, (c) => ESCAPES[c]) },  // raw HTML stays text
});
// where a sentence's citation markers go: characters no text keeps (removed from it first)
const CITE_MARK = /\uE000([\d,]+)\uE001/;
const CITE_CHARS = /[\uE000\uE001]/g;

function renderMarkdown(text) {
  const html = markdown.parse(text || "");
  const fragment = window.DOMPurify.sanitize(html, {
    ALLOWED_TAGS: MARKDOWN_TAGS, ALLOWED_ATTR: ["href", "start"], RETURN_DOM_FRAGMENT: true,
  });
  for (const link of fragment.querySelectorAll("a")) { link.target = "_blank"; link.rel = "noopener noreferrer"; }
  return fragment;
}

// The answer's Markdown with each cited sentence's numbers right after it (at the end when not found).
function citedMarkdown(done) {
  const text = (done.answer || "").replace(CITE_CHARS, "");
  let cursor = 0, out = "";
  const unplaced = [];
  for (const part of done.parts) {
    if (!part.cites.length) continue;
    const at = text.indexOf(part.text.replace(CITE_CHARS, ""), cursor);
    if (at < 0) { unplaced.push(...part.cites); continue; }
    const end = at + part.text.length;
    out += text.slice(cursor, end) + "\uE000" + part.cites.join(",") + "\uE001";
    cursor = end;
  }
  return out + text.slice(cursor) + (unplaced.length ? " \uE000" + unplaced.join(",") + "\uE001" : "");
}

function placeMarkers(root, marker) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const marked = [];
  while (walker.nextNode()) if (CITE_MARK.test(walker.currentNode.nodeValue)) marked.push(walker.currentNode);
  for (const node of marked) {
    const pieces = node.nodeValue.split(CITE_MARK);  // text, numbers, text, numbers, ...
    node.replaceWith(...pieces.flatMap((piece, i) =>
      i % 2 ? piece.split(",").map((n) => marker(Number(n))) : piece ? [document.createTextNode(piece)] : []));
  }
}

// -- conversations --------------------------------------------------------------------------------

async function loadThreads() {
  const response = await api("GET", "/api/threads");
  if (!response.ok) return notice(await detail(response));
  const list = $("threads");
  list.replaceChildren();
  for (const thread of (await response.json()).threads) {
    const item = el("li", thread.thread_id === state.thread ? "current" : "");
    item.dataset.thread = thread.thread_id;
    const link = el("a", "", thread.title || "New conversation");
    link.href = "#" + thread.thread_id;
    const remove = el("button", "delete", "×");
    remove.title = "Delete this conversation";
    remove.addEventListener("click", () => deleteThread(thread.thread_id));
    item.append(link, remove);
    list.append(item);
  }
}

async function deleteThread(id) {
  const response = await api("DELETE", "/api/threads/" + encodeURIComponent(id));
  if (!response.ok) return notice(await detail(response));
  if (id === state.thread) { location.hash = ""; clearConversation(); }
  loadThreads();
}

function clearConversation() {
  state.thread = null; state.turns = 0; state.waiting = null;
  $("messages").replaceChildren();
  closeSource();
}

async function openThread(id) {
  const response = await api("GET", "/api/threads/" + encodeURIComponent(id));
  if (!response.ok) { notice(await detail(response)); location.hash = ""; return; }
  const thread = await response.json();
  clearConversation();
  state.thread = id;
  state.turns = thread.turns.length;
  thread.turns.forEach((turn, i) => {
    const last = i === thread.turns.length - 1;
    if (turn.speaker === "user") addUser(turn.text);
    else if (last && thread.last) renderAnswer(addBot(), thread.last);
    else addBot().append(renderMarkdown(turn.text));
  });
  if (thread.waiting) renderQuestion(addBot(), thread.waiting);
  loadThreads();
}

async function newThread() {
  const response = await api("POST", "/api/threads", {});
  if (!response.ok) { notice(await detail(response)); return null; }
  const thread = await response.json();
  clearConversation();
  state.thread = thread.thread_id;
  history.replaceState(null, "", "#" + thread.thread_id);
  await loadThreads();
  return thread.thread_id;
}

// -- messages -------------------------------------------------------------------------------------

function addUser(text) {
  const node = el("div", "msg user", text);
  $("messages").append(node);
  node.scrollIntoView({ block: "end" });
  return node;
}

function addBot() {
  const node = el("div", "msg bot");
  $("messages").append(node);
  return node;
}

function renderAnswer(node, done) {
  node.replaceChildren();
  node.className = "msg bot" + (done.idk ? " idk" : "");
  if (done.idk) node.append(el("span", "label", "No answer in these documents"));
  const body = el("div", "markdown");
  body.append(renderMarkdown(citedMarkdown(done)));
  placeMarkers(body, (number) => {
    const source = done.sources.find((s) => s.number === number);
    const marker = el("button", "cite", String(number));
    marker.type = "button";
    marker.title = source ? source.title : "";
    marker.addEventListener("click", () => openSource(source));
    return marker;
  });
  node.append(body);
  if (done.sources.length) {
    const list = el("div", "sources", "Sources: ");
    done.sources.forEach((source, i) => {
      const link = el("button", "", `[${source.number}] ${source.title || source.document_id}`);
      link.type = "button";
      link.addEventListener("click", () => openSource(source));
      list.append(i ? ", " : "", link);
    });
    node.append(list);
  }
}

function renderQuestion(node, question) {
  state.waiting = question;
  node.replaceChildren(el("span", "label", "A question back to you"), question);
  node.className = "msg bot clarify";
  const form = el("form", "reply");
  const input = el("input");
  input.placeholder = "Your reply…";
  input.maxLength = 4000;
  input.required = true;
  const button = el("button", "", "Reply");
  button.type = "submit";
  form.append(input, button);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.value.trim() || state.busy) return;
    form.remove();
    send(input.value.trim());
  });
  node.append(form);
  input.focus();
}

function openSource(source) {
  if (!source) return;
  $("source-title").textContent = source.title || source.document_id;
  const origin = [source.url || source.source || source.file || "", source.page ? "page " + source.page : "", source.section || ""];
  $("source-origin").textContent = origin.filter(Boolean).join(", ") + ` (${source.document_id})`;
  if (source.text) $("source-quote").replaceChildren(renderMarkdown(source.text));
  else $("source-quote").textContent = "(the passage's text is not available)";
  $("source-panel").hidden = false;
}

function closeSource() { $("source-panel").hidden = true; }

// -- a turn, streamed -----------------------------------------------------------------------------

async function* serverSentEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let kind = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) kind = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      yield [kind, data ? JSON.parse(data) : {}];
    }
  }
}

async function send(text) {
  if (state.busy) return;
  state.busy = true;
  $("send").disabled = true;
  notice("");
  try {
    if (!state.thread && !(await newThread())) return;
    addUser(text);
    const bot = addBot();
    const body = { text, after: state.turns };
    for (let attempt = 0; attempt < 4; attempt++) {
      try {
        if (await streamTurn(body, bot)) break;
      } catch (error) {
        showStep("connection lost, trying again");
        await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
      }
    }
  } finally {
    showStep("");
    state.busy = false;
    $("send").disabled = false;
    loadThreads();
  }
}

// One attempt at a turn; true when it ended (answer, question or refusal), false or a throw to retry.
async function streamTurn(body, bot) {
  const response = await api("POST", `/api/threads/${encodeURIComponent(state.thread)}/messages`, body);
  if (!response.ok) {
    bot.className = "msg bot error";
    bot.textContent = await detail(response);
    return true;
  }
  bot.replaceChildren();
  for await (const [kind, data] of serverSentEvents(response)) {
    if (kind === "step") showStep(data.label);
    else if (kind === "text") {
      showStep("writing the answer");
      bot.append(data.text);
      bot.dataset.chunks = String(Number(bot.dataset.chunks || 0) + 1);  // how the answer arrived, for tests
      bot.scrollIntoView({ block: "end" });
    }
    else if (kind === "retract") bot.replaceChildren();
    else if (kind === "interrupt") { renderQuestion(bot, data.question); state.turns = data.turns; return true; }
    else if (kind === "done") { state.waiting = null; renderAnswer(bot, data); state.turns = data.turns; return true; }
    else if (kind === "error") { bot.className = "msg bot error"; bot.textContent = data.detail; return true; }
  }
  return false;
}

// -- wiring ---------------------------------------------------------------------------------------

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("input").value.trim();
  if (!text) return;
  $("input").value = "";
  send(text);
});
$("input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("composer").requestSubmit(); }
});
$("new-thread").addEventListener("click", () => { location.hash = ""; clearConversation(); loadThreads(); $("input").focus(); });
$("close-source").addEventListener("click", closeSource);
window.addEventListener("hashchange", () => {
  const id = location.hash.slice(1);
  if (id && id !== state.thread) openThread(id);
});
if (location.hash.length > 1) openThread(location.hash.slice(1)); else loadThreads();
