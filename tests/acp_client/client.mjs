// An editor's side of the Agent Client Protocol, written against the
// official TypeScript SDK (@agentclientprotocol/sdk), driving the real
// `cairn acp` binary. tests/acp_sdk.rs starts the scripted model, runs this
// with the binary's path and the project directory, and checks the report
// it prints (one JSON object on stdout) and the files on disk.
//
//   node client.mjs CAIRN_BINARY PROJECT_DIR PINGS
//   node client.mjs CAIRN_BINARY PROJECT_DIR 0 terminals
//
// The conversation: initialize (announcing the editor's files and
// terminals); a new session; a prompt whose answer views and edits a.txt
// (the edit asks, with its diff; the client allows once) and runs a command
// whose output streams; a prompt whose answer views and edits notes.txt,
// which has an unsaved buffer here (read and written over fs/*, the disk
// left alone); bad requests (an unknown session,
// an unknown mode) answered with errors; a mode switch; PINGS short prompts
// timed from the request to the first update; a slow answer cancelled
// mid-stream; the session list; then a second `cairn acp` loads the session.
// This editor offers terminals but fails to make one: cairn runs the command
// itself and says so once.
//
// With `terminals` (tests/acp_terminals.rs) the editor runs terminals as
// an editor does (a child process with the command, arguments and
// directory cairn names): a prompt whose commands probe their containment
// in the editor's terminal, a prompt whose long command is cancelled, then
// a second `cairn acp` whose editor offers no terminals runs the same probe.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [cairn, project, pingsArg] = process.argv.slice(2);
const pings = Number(pingsArg ?? "0");

function start() {
  const child = spawn(cairn, ["acp"], {
    cwd: project,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout),
  );
  return { child, stream };
}

/// The editor's buffers: notes.txt is open with unsaved changes; any other
/// file reads from the disk, and a write to it is saved.
function editorFiles() {
  const notes = join(project, "notes.txt");
  return { buffers: new Map([[notes, "UNSAVED alpha notes\n"]]), log: [] };
}

/// Updates, permission requests and file requests as they arrive, with
/// their time; `log` keeps the order of questions and file calls.
function recorder(files = editorFiles(), host = null) {
  const rec = { updates: [], permissions: [], waiters: [], files };
  rec.app = acp
    .client({ name: "cairn-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      rec.updates.push({ at: performance.now(), ...params.update });
      for (const w of rec.waiters.splice(0)) w();
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      // What the file holds while the question is open: nothing is
      // written before the answer.
      const onDisk = readFileSync(join(project, "a.txt"), "utf8");
      rec.permissions.push({ ...params, onDisk });
      files.log.push({ what: "permission", toolCallId: params.toolCall.toolCallId });
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      files.log.push({ what: "read", path: params.path });
      const open = files.buffers.get(params.path);
      return { content: open ?? readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      files.log.push({ what: "write", path: params.path, content: params.content });
      if (files.buffers.has(params.path)) files.buffers.set(params.path, params.content);
      else writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      files.log.push({ what: "terminal", command: params.command });
      if (!host) throw new Error("this test editor cannot open a terminal");
      return host.create(params);
    })
    .onRequest(acp.methods.client.terminal.output, ({ params }) => host.output(params))
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => host.waitForExit(params))
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => host.kill(params))
    .onRequest(acp.methods.client.terminal.release, ({ params }) => host.release(params));
  rec.until = async (pred, what) => {
    const deadline = Date.now() + 30000;
    while (!rec.updates.some(pred)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => {
        rec.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return rec;
}

/// Terminals as an editor runs them: the process cairn names, with the
/// editor's own environment, its output kept up to the byte limit.
function terminalHost() {
  const host = { terminals: new Map(), created: [], next: 1 };
  host.create = (params) => {
    const id = `term-${host.next++}`;
    const env = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    const child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? project,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const t = { child, output: "", truncated: false, exit: null, limit: params.outputByteLimit };
    const add = (b) => {
      t.output += b.toString("utf8");
      if (t.limit != null && Buffer.byteLength(t.output) > t.limit) {
        t.output = t.output.slice(-t.limit);
        t.truncated = true;
      }
    };
    child.stdout.on("data", add);
    child.stderr.on("data", add);
    t.exited = new Promise((r) =>
      child.on("exit", (code, signal) => {
        t.exit = { exitCode: code, signal };
        r(t.exit);
      }),
    );
    host.terminals.set(id, t);
    host.created.push({ id, command: params.command, args: params.args, cwd: params.cwd, pid: child.pid });
    return { terminalId: id };
  };
  const get = (params) => {
    const t = host.terminals.get(params.terminalId);
    if (!t) throw new Error(`no terminal ${params.terminalId}`);
    return t;
  };
  host.output = (params) => {
    const t = get(params);
    return { output: t.output, truncated: t.truncated, exitStatus: t.exit };
  };
  host.waitForExit = async (params) => await get(params).exited;
  host.kill = (params) => {
    const t = get(params);
    // Killed outright: the launcher has no chance to clean up.
    if (!t.exit) t.child.kill("SIGKILL");
    host.killed = params.terminalId;
    return {};
  };
  host.release = (params) => {
    const t = get(params);
    if (!t.exit) t.child.kill("SIGKILL");
    t.released = true;
    return {};
  };
  host.alive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return host;
}

async function terminals(report) {
  const host = terminalHost();
  const rec = recorder(editorFiles(), host);
  const { child, stream } = start();
  await rec.app.connectWith(stream, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { terminal: true },
    });
    const session = await ctx.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
    const probe = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "probe the sandbox" }],
    });
    // The title's own model call comes next; waiting keeps replies in order.
    await rec.until((u) => u.sessionUpdate === "session_info_update", "the title");
    report.probe = { stopReason: probe.stopReason, updates: rec.updates.slice() };
    report.released = [...host.terminals.entries()].map(([id, t]) => ({ id, released: !!t.released, exit: t.exit, output: t.output }));

    const from = rec.updates.length;
    const long = ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "run the long job" }],
    });
    const deadline = Date.now() + 30000;
    const running = () => [...host.terminals.values()].find((t) => t.output.includes("started-long"));
    while (!running()) {
      if (Date.now() > deadline) throw new Error("the long command did not start in a terminal");
      await new Promise((r) => setTimeout(r, 50));
    }
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    const stopped = await long;
    const launcher = host.created[host.created.length - 1];
    await new Promise((r) => setTimeout(r, 500));
    report.cancel = {
      stopReason: stopped.stopReason,
      killed: host.killed,
      launcherAlive: host.alive(launcher.pid),
      updates: rec.updates.slice(from),
    };
    report.created = host.created.slice();
  });
  child.stdin.end();
  report.firstExit = await new Promise((r) => child.on("exit", (code) => r(code)));

  // An editor without terminals: the same probe runs inside cairn.
  const plain = recorder(editorFiles());
  const second = start();
  await plain.app.connectWith(second.stream, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const session = await ctx.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
    const probe = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "probe the sandbox" }],
    });
    report.plain = { stopReason: probe.stopReason, updates: plain.updates.slice(), log: plain.files.log };
  });
  second.child.stdin.end();
  report.secondExit = await new Promise((r) => second.child.on("exit", (code) => r(code)));
}

async function error(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

function text(updates, kind) {
  return updates
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => u.content?.text ?? "")
    .join("");
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : null;
}

async function firstSession(report) {
  const rec = recorder();
  const { child, stream } = start();
  await rec.app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      clientInfo: { name: "cairn-acp-test", version: "1" },
    });
    report.initialize = init;
    const session = await ctx.request(acp.methods.agent.session.new, {
      cwd: project,
      mcpServers: [],
    });
    report.sessionId = session.sessionId;
    report.modes = session.modes;

    const sent = performance.now();
    const edit = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "change alpha to beta in a.txt, then run the script" }],
    });
    report.edit = {
      stopReason: edit.stopReason,
      updates: rec.updates.map((u) => ({ ...u, at: u.at - sent })),
      permissions: rec.permissions.slice(),
      text: text(rec.updates, "agent_message_chunk"),
    };
    // The title comes from a model call of its own after the first turn;
    // waiting for it keeps the scripted replies in order.
    await rec.until((u) => u.sessionUpdate === "session_info_update", "the title");
    report.title = rec.updates.find((u) => u.sessionUpdate === "session_info_update").title;

    // notes.txt has unsaved changes in the editor: the view sees them and
    // the edit lands on the disk, after the question.
    const fromNotes = rec.updates.length;
    const logFrom = rec.files.log.length;
    const notes = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "fix the notes" }],
    });
    report.notes = {
      stopReason: notes.stopReason,
      updates: rec.updates.slice(fromNotes),
      log: rec.files.log.slice(logFrom),
      buffer: rec.files.buffers.get(join(project, "notes.txt")),
      onDisk: readFileSync(join(project, "notes.txt"), "utf8"),
    };

    report.unknownSession = await error(
      ctx.request(acp.methods.agent.session.prompt, {
        sessionId: "no-such-session",
        prompt: [{ type: "text", text: "hello" }],
      }),
    );
    report.unknownMode = await error(
      ctx.request(acp.methods.agent.session.setMode, {
        sessionId: session.sessionId,
        modeId: "reckless",
      }),
    );
    report.emptyPrompt = await error(
      ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [],
      }),
    );
    await ctx.request(acp.methods.agent.session.setMode, {
      sessionId: session.sessionId,
      modeId: "always-ask",
    });
    await rec.until((u) => u.sessionUpdate === "current_mode_update", "the mode update");
    report.modeUpdate = rec.updates.find((u) => u.sessionUpdate === "current_mode_update");

    report.pings = { firstUpdateMs: [], firstTextMs: [] };
    for (let i = 0; i < pings; i++) {
      const from = rec.updates.length;
      const t0 = performance.now();
      await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: `ping ${i}` }],
      });
      const mine = rec.updates.slice(from);
      const firstText = mine.find((u) => u.sessionUpdate === "agent_message_chunk");
      if (mine.length) report.pings.firstUpdateMs.push(mine[0].at - t0);
      if (firstText) report.pings.firstTextMs.push(firstText.at - t0);
    }
    report.pings.medianFirstUpdateMs = median(report.pings.firstUpdateMs);
    report.pings.medianFirstTextMs = median(report.pings.firstTextMs);

    // A slow answer, cancelled once it has started streaming.
    const from = rec.updates.length;
    const slow = ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "tell me a long story" }],
    });
    await rec.until(
      (u) => rec.updates.indexOf(u) >= from && u.sessionUpdate === "agent_message_chunk",
      "the story to start",
    );
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    const stopped = await slow;
    report.cancel = {
      stopReason: stopped.stopReason,
      text: text(rec.updates.slice(from), "agent_message_chunk"),
    };

    report.list = await ctx.request(acp.methods.agent.session.list, { cwd: project });
  });
  report.fileLog = rec.files.log;
  child.stdin.end();
  report.firstExit = await new Promise((r) => child.on("exit", (code) => r(code)));
}

async function loadAgain(report) {
  const rec = recorder();
  const { child, stream } = start();
  await rec.app.connectWith(stream, async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const loaded = await ctx.request(acp.methods.agent.session.load, {
      sessionId: report.sessionId,
      cwd: project,
      mcpServers: [],
    });
    report.load = {
      response: loaded,
      // Updates that arrived before the answer: the replayed conversation.
      updates: rec.updates.slice(),
      user: text(rec.updates, "user_message_chunk"),
      agent: text(rec.updates, "agent_message_chunk"),
    };
    report.loadMissing = await error(
      ctx.request(acp.methods.agent.session.load, {
        sessionId: "0000dead-0000-0000-0000-000000000000",
        cwd: project,
        mcpServers: [],
      }),
    );
  });
  child.stdin.end();
  report.secondExit = await new Promise((r) => child.on("exit", (code) => r(code)));
}

const report = {};
try {
  if (process.argv[5] === "terminals") {
    await terminals(report);
  } else {
    await firstSession(report);
    await loadAgain(report);
  }
} catch (e) {
  report.failure = String(e?.stack ?? e);
}
process.stdout.write(JSON.stringify(report) + "\n");
