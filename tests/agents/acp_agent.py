#!/usr/bin/env python3
"""A scriptable ACP agent for the verify tests: `acp_agent.py --mode MODE`.

Modes: well-behaved (default), stdout-log (a log line on stdout first), chatty (a
notification and a request before its response), silent (never answers), exit (exits at
once with code 3, saying why on stderr), grandchild (starts a grandchild that calls setsid and ignores SIGTERM,
writes its pid to $PID_FILE), orphan (the same through a parent that exits, so the
grandchild is reparented), contradict (advertises no loadSession), v2 (answers protocol
version 2), no-auth (offers no sign-in method), env (echoes its environment to $ENV_FILE),
replay (answers initialize with the `result` of the recorded answer in $ANSWER_FILE, such
as tests/fixtures/acp/*.json), flood (never answers: prints short non-JSON lines as fast as it
can until killed), deaf (never reads stdin: sends 10,000 JSON-RPC requests, each wanting a reply,
then waits until killed or orphaned).
"""
import json
import os
import signal
import sys
import time

mode = "well-behaved"
if "--mode" in sys.argv:
    mode = sys.argv[sys.argv.index("--mode") + 1]


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def linger():
    """A grandchild that leaves the process group and ignores SIGTERM."""
    os.setsid()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(os.environ["PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
    while True:
        time.sleep(1)


def spawn_grandchild(through_orphan):
    pid = os.fork()
    if pid == 0:
        if through_orphan:
            if os.fork() != 0:
                os._exit(0)
        linger()
    if through_orphan:
        os.waitpid(pid, 0)
    # Wait until the grandchild wrote its pid, so the test can look for it.
    for _ in range(200):
        if os.path.exists(os.environ["PID_FILE"]):
            break
        time.sleep(0.01)


def initialize_result():
    if mode == "replay":
        with open(os.environ["ANSWER_FILE"]) as f:
            return json.load(f)["result"]
    caps = {"loadSession": mode != "contradict", "sessionCapabilities": {"list": {}}}
    auth = [] if mode == "no-auth" else [{"id": "login", "name": "Log in"}]
    return {
        "protocolVersion": 2 if mode == "v2" else 1,
        "agentCapabilities": caps,
        "authMethods": auth,
        "agentInfo": {"name": "test-agent", "version": "1.0.0"},
    }


def answer(request):
    method = request.get("method")
    if method == "initialize":
        if mode == "env":
            with open(os.environ["ENV_FILE"], "w") as f:
                json.dump(dict(os.environ), f)
        if mode == "stdout-log":
            sys.stdout.write("Starting test agent...\n")
        if mode == "chatty":
            send({"method": "session/update", "params": {"update": "hello"}})
            send({"id": "agent-1", "method": "fs/read_text_file", "params": {"path": "/x"}})
            # An editor answers; a verifier that does not would hang us here.
            reply = json.loads(sys.stdin.readline())
            if reply.get("id") != "agent-1" or "error" not in reply:
                sys.exit(4)
        return {"result": initialize_result()}
    if method == "session/new":
        return {"result": {"sessionId": "s1", "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}}}
    if method == "session/list":
        return {"result": {"sessions": []}}
    if method == "session/load":
        return {"error": {"code": -32002, "message": "no such session"}}
    if method == "session/set_mode":
        return {"result": {}}
    return {"error": {"code": -32601, "message": "method not found"}}


def flood():
    """Short non-JSON lines, 8 KiB at a time, until the reader goes away."""
    chunk = "x\n" * 4096
    try:
        while True:
            sys.stdout.write(chunk)
    except BrokenPipeError:
        os._exit(0)


def main():
    if mode == "flood":
        flood()
    if mode == "deaf":
        parent = os.getppid()
        for n in range(10000):
            send({"id": n, "method": "fs/read_text_file", "params": {"path": "/x"}})
        # Until killed, or orphaned by a verifier that was killed without its clean-up.
        while os.getppid() == parent:
            time.sleep(0.5)
        sys.exit(0)
    if mode == "exit":
        sys.stderr.write("fatal: this build has no ACP mode\n")
        sys.exit(3)
    if mode in ("grandchild", "orphan"):
        spawn_grandchild(mode == "orphan")
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if mode == "silent" or "id" not in request or "method" not in request:
            continue
        reply = answer(request)
        reply["id"] = request["id"]
        send(reply)


main()
