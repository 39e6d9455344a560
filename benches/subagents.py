#!/usr/bin/env python3
"""Sub-agents, measured through the real binary against the scripted model
server (examples/mock_model.rs), which streams each answer at a fixed
pace (chunk_chars characters every delay_ms):

1. wall time of two sub-agents run in parallel (`[agents] max_parallel = 4`)
   against the same two run one after the other (`max_parallel = 1`);
2. memory per running sub-agent: the peak resident memory (VmHWM) of
   `cairn run` while 1, 2, 4 and 8 sub-agents stream at once, and the
   slope between 1 and 8.

Medians of RUNS runs.  Build first:
    cargo build --bin cairn --example mock_model
    python3 benches/subagents.py [--release] [--port 8792] [--runs 5]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def paths(release):
    kind = "release" if release else "debug"
    return (
        os.path.join(ROOT, "target", kind, "cairn"),
        os.path.join(ROOT, "target", kind, "examples", "mock_model"),
    )


def script(n, chars, delay_ms):
    """The parent delegates to n explore agents at once; each answers with
    `chars` characters, 4 per chunk, one chunk every delay_ms."""
    calls = [
        {
            "id": f"t{i}",
            "name": "agent",
            "args": {
                "subagent_type": "explore",
                "description": f"part {i}",
                "prompt": f"TASK-{i}-END: look at part {i}",
            },
        }
        for i in range(n)
    ]
    replies = [{"text": "Delegating.", "tool_calls": calls}]
    for i in range(n):
        replies.append(
            {
                "when": f"TASK-{i}-END",
                "text": (f"part {i} answer " * chars)[:chars],
                "chunk_chars": 4,
                "delay_ms": delay_ms,
            }
        )
    replies += [{"text": "Done."}, {"text": "Title"}]
    return replies


def free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def run_once(cairn, mock, port, replies, max_parallel):
    work = tempfile.mkdtemp(prefix="cairn-bench-sub-")
    try:
        home, proj = os.path.join(work, "home"), os.path.join(work, "proj")
        os.makedirs(os.path.join(proj, ".git"))
        os.makedirs(os.path.join(home, "config", "cairn"))
        with open(os.path.join(home, "config", "cairn", "config.toml"), "w") as f:
            f.write(f"[agents]\nmax_parallel = {max_parallel}\n")
        spath = os.path.join(work, "script.json")
        with open(spath, "w") as f:
            json.dump(replies, f)
        while not free(port):
            time.sleep(0.05)
        server = subprocess.Popen(
            [mock, "anthropic", f"127.0.0.1:{port}", spath],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while free(port):
            time.sleep(0.02)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "XDG_CONFIG_HOME": os.path.join(home, "config"),
            "XDG_DATA_HOME": os.path.join(home, "data"),
            "XDG_STATE_HOME": os.path.join(home, "state"),
            "ANTHROPIC_API_KEY": "x",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        }
        start = time.monotonic()
        p = subprocess.Popen(
            [cairn, "run", "go"],
            cwd=proj,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        peak = 0
        while p.poll() is None:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.01)
        wall = time.monotonic() - start
        err = p.stderr.read().decode(errors="replace")
        server.kill()
        server.wait()
        if p.returncode != 0 or err.count("⇠ sub-agent") != sum(
            1 for r in replies if "when" in r
        ):
            raise SystemExit(f"run failed ({p.returncode}):\n{err}")
        return wall, peak
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--release", action="store_true")
    ap.add_argument("--port", type=int, default=8792)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    cairn, mock = paths(a.release)

    two = script(2, 200, 20)  # 50 chunks x 20 ms: about 1 s per answer
    par = [run_once(cairn, mock, a.port, two, 4)[0] for _ in range(a.runs)]
    seq = [run_once(cairn, mock, a.port, two, 1)[0] for _ in range(a.runs)]
    mp, ms = statistics.median(par), statistics.median(seq)
    print("two sub-agents, each streaming ~1.0 s (50 chunks x 20 ms):")
    print(f"  parallel   median {mp:.2f} s   runs {[round(x, 2) for x in par]}")
    print(f"  sequential median {ms:.2f} s   runs {[round(x, 2) for x in seq]}")
    print(f"  parallel / sequential = {mp / ms:.2f}")

    peaks = {}
    for n in (1, 2, 4, 8):
        rs = [run_once(cairn, mock, a.port, script(n, 120, 25), 8)[1] for _ in range(max(3, a.runs - 2))]
        peaks[n] = statistics.median(rs)
        print(f"  {n} sub-agents at once: peak RSS median {peaks[n] / 1024:.1f} MiB  runs {rs}")
    per = (peaks[8] - peaks[1]) / 7
    print(f"memory per running sub-agent (slope 1 -> 8): {per:.0f} KiB")


if __name__ == "__main__":
    main()
