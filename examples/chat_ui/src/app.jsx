// A chat page over the served graph, built on @langchain/langgraph-sdk's useStream: what a LangGraph
// chat UI does (Agent Chat UI is built on the same hook). ?api=URL names the LangGraph server;
// &contexts=JSON the passages the first message of a thread is answered from; &context=JSON the run's
// settings (the graph's Context, e.g. {"grounding": "facts"}), sent with every run.
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { useStream } from "@langchain/langgraph-sdk/react";

const params = new URLSearchParams(window.location.search);
const apiUrl = params.get("api") || "http://127.0.0.1:2024";
const contexts = JSON.parse(params.get("contexts") || "null");
const context = JSON.parse(params.get("context") || "null") || undefined;

function textOf(content) {
  if (typeof content === "string") return content;
  return (content || []).map((block) => (typeof block === "string" ? block : block.text || "")).join("");
}

function typeOf(message) {
  if (typeof message.type === "string") return message.type;
  return typeof message.getType === "function" ? message.getType() : message._getType?.();
}

function App() {
  const [threadId, setThreadId] = useState(null);
  const [draft, setDraft] = useState("");
  const stream = useStream({ apiUrl, assistantId: "mtrag_graph", messagesKey: "messages", threadId, onThreadId: setThreadId });
  const asked = stream.interrupt?.value?.clarifying_question;

  function send(event) {
    event.preventDefault();
    const text = draft.trim();
    if (!text || stream.isLoading) return;
    setDraft("");
    if (asked) {
      stream.submit(undefined, { command: { resume: text }, context }); // the reply to the clarifying question
    } else {
      const input = { messages: [{ type: "human", content: text }] };
      stream.submit(threadId || !contexts ? input : { ...input, contexts }, { context });
    }
  }

  return (
    <main>
      <ol id="messages">
        {stream.messages.map((message, index) => (
          <li key={message.id ?? index} className={typeOf(message)}>{textOf(message.content)}</li>
        ))}
      </ol>
      {asked && <p id="asked">{asked}</p>}
      {stream.error && <p id="error">{String(stream.error)}</p>}
      <form onSubmit={send}>
        <input id="say" value={draft} onChange={(event) => setDraft(event.target.value)} autoComplete="off" />
        <button id="send" type="submit">Send</button>
      </form>
      <p id="status">{stream.isLoading ? "answering" : asked ? "waiting for your reply" : "ready"}</p>
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
