#!/usr/bin/env python3
"""A scriptable ACP agent for the verify tests: `acp_agent.py --mode MODE`.

Modes: well-behaved (default), stdout-log (a log line on stdout first), chatty (a
notification and a request before its response), silent (never answers), exit (exits at
once with code 3, saying why on stderr), slow (answers after 1.5 s), grandchild (starts a
grandchild that calls setsid and ignores SIGTERM), orphan (the same through a parent that
exits, so the grandchild is reparented), reexec-orphan (the orphan then re-executes itself
with an empty environment and its standard streams on /dev/null), contradict (advertises no
loadSession), v2 (answers protocol version 2), no-auth (offers no sign-in method), env
(reports its environment), probe (reports what a hostile agent can reach: see `probe()`),
replay (answers initialize with the `result` of the recorded answer in $ANSWER, or in the
file $ANSWER_FILE, such as tests/fixtures/acp/*.json), plant (writes $HOME/planted for another
agent to try to read), hold (starts the grandchild of `grandchild`, then ignores SIGTERM and lingers, never
reading stdin: a closed stdin does not end it), flood (never answers: prints short non-JSON lines as fast as it
can until killed), deaf (never reads stdin: sends 10,000 JSON-RPC requests, each wanting a reply,
then waits until killed or orphaned).

What a mode reports goes into the `_meta` of its initialize answer, which `verify --format
json` shows: the agent may not be able to write anywhere outside its sandbox. A private
/proc hides the pids the verifier sees, so a grandchild is found by its tag instead: every
lingering grandchild runs with `--tag TAG` on its command line (TAG from `--tag`, else the
sandbox's token), which `_meta.tag` reports.
"""
import json
import os
import signal
import sys
import time

mode = "well-behaved"
if "--mode" in sys.argv:
    mode = sys.argv[sys.argv.index("--mode") + 1]
tag = os.environ.get("ACP_REGISTRY_VERIFY_SANDBOX", "untagged")
if "--tag" in sys.argv:
    tag = sys.argv[sys.argv.index("--tag") + 1]


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def host_pid():
    try:
        return int(os.readlink("/proc/self"))
    except OSError:
        return os.getpid()


def linger(report):
    """Ignore SIGTERM, write our pid to the descriptor `report`, then wait forever."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.write(report, b"%d\n" % host_pid())
    os.close(report)
    while True:
        time.sleep(1)


def grandchild(report, orphaned_from, reexec):
    """Leave the session; once orphaned, re-execute as `linger` with the tag on the command
    line (with `reexec`: with nothing of the sandbox, its standard streams on /dev/null)."""
    os.setsid()
    while orphaned_from is not None and os.getppid() == orphaned_from:
        time.sleep(0.01)
    if reexec:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    os.set_inheritable(report, True)
    argv = [sys.executable, os.path.abspath(__file__), "--mode", "linger", "--report", str(report),
            "--tag", tag]
    os.execve(sys.executable, argv, {} if reexec else dict(os.environ))


def spawn_grandchild(through_orphan, reexec=False):
    """The grandchild's pid, once it runs (after its re-exec, when it re-executes)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        if through_orphan:
            parent = os.getpid()
            if os.fork() != 0:
                os._exit(0)
            grandchild(write, parent, reexec)
        grandchild(write, None, reexec)
    os.close(write)
    if through_orphan:
        os.waitpid(pid, 0)
    with os.fdopen(read) as f:
        return int(f.readline())


def secrets_seen(name):
    """Values of `name` in every environment we can read: our ancestors', then all."""
    seen = {}
    pids = []
    pid = os.getppid()
    while pid > 1:
        pids.append(pid)
        try:
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    try:
        pids += [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        pass
    for pid in pids:
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        for var in env:
            if var.startswith(name.encode() + b"="):
                seen[str(pid)] = var.decode(errors="replace")
    return seen


def try_read(path):
    try:
        if os.path.isdir(path):
            os.listdir(path)
            return "listed"
        with open(path, "rb") as f:
            f.read(1)
        return "read"
    except OSError as e:
        return e.strerror or str(e)


def reads():
    """What of $READ_PROBES (separated by os.pathsep) and of $READ_SIBLING (a path relative
    to the run folder, above our sandbox) the agent can read; waits up to 5 s for the
    sibling, which another agent writes (and which stays until the run ends)."""
    paths = [p for p in os.environ.get("READ_PROBES", "").split(os.pathsep) if p]
    sibling = os.environ.get("READ_SIBLING")
    if sibling:
        # $HOME is <run>/<job>/sandbox/home.
        run = os.path.dirname(os.path.dirname(os.path.dirname(os.environ["HOME"])))
        path = os.path.join(run, sibling)
        for _ in range(50):
            if os.path.lexists(path):
                break
            time.sleep(0.1)
        paths.append(path)
    return {path: try_read(path) for path in paths}


def processes():
    """Every process /proc lists: its command line (or why not) and whether its environment
    was readable (and holds $SECRET_NAME)."""
    seen = {}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError as e:
        return {"error": e.strerror}
    for pid in pids:
        entry = {}
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                entry["cmdline"] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError as e:
            entry["cmdline_error"] = e.strerror
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                entry["environ"] = f.read().decode(errors="replace")
        except OSError as e:
            entry["environ_error"] = e.strerror
        seen[pid] = entry
    return seen


def try_write(path):
    try:
        with open(path, "w") as f:
            f.write("written by the agent\n")
        return "written"
    except OSError as e:
        return e.strerror or str(e)


def probe():
    """What a hostile agent reaches: the verifier's secret, inherited descriptors, writes
    outside the sandbox ($WRITE_PROBES, separated by os.pathsep) and inside it, and the
    modes of the folders above its HOME up to the run folder."""
    fds = {}
    listing = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    for fd in os.listdir(listing):
        try:
            fds[fd] = os.readlink(os.path.join(listing, fd))
        except OSError:
            fds[fd] = "open"
    writes = {}
    inside = [os.path.join(os.environ["HOME"], "probe"), os.path.join(os.environ["TMPDIR"], "probe"),
              os.path.join(os.getcwd(), "probe"), os.path.join(os.environ["npm_config_cache"], "probe")]
    for path in os.environ.get("WRITE_PROBES", "").split(os.pathsep) + inside:
        if path:
            writes[path] = try_write(path)
    modes = {}
    folder = os.environ["HOME"]
    while folder != os.path.dirname(folder):
        modes[folder] = oct(os.stat(folder).st_mode & 0o777)
        if os.path.basename(folder).startswith("acp-registry-verify-"):
            break
        folder = os.path.dirname(folder)
    timings = {}
    secrets = timed(timings, "secrets", lambda: secrets_seen(os.environ["SECRET_NAME"]), {})
    found = timed(timings, "reads", reads, {})
    listed = timed(timings, "processes", processes, {})
    return {"secrets": secrets, "fds": fds, "writes": writes, "modes": modes, "reads": found,
            "processes": listed, "self": try_read("/proc/self/status"), "timings": timings}


def timed(timings, name, work, fallback, limit=8.0):
    """`work()` in a thread for at most `limit` seconds (a read of another process's /proc
    file can wait on that process's locks): its value, else `fallback`; the seconds it took
    (or "timeout") go into `timings`, so a slow probe says which part was slow."""
    import threading
    box = {}
    started = time.monotonic()
    worker = threading.Thread(target=lambda: box.setdefault("value", work()), daemon=True)
    worker.start()
    worker.join(limit)
    timings[name] = round(time.monotonic() - started, 3) if "value" in box else "timeout"
    return box.get("value", fallback)


def initialize_result():
    meta = {}
    if grandchild_pid is not None:
        meta["grandchild"] = grandchild_pid
        meta["tag"] = tag
    if mode == "env":
        meta["env"] = dict(os.environ)
    if mode == "probe":
        meta["probe"] = probe()
    if mode == "replay":
        if "ANSWER" in os.environ:
            return json.loads(os.environ["ANSWER"])["result"]
        with open(os.environ["ANSWER_FILE"]) as f:
            return json.load(f)["result"]
    # `fork` is unstable: `matrix` lists it without sending it.
    caps = {"loadSession": mode != "contradict", "sessionCapabilities": {"list": {}, "fork": {}}}
    auth = [] if mode == "no-auth" else [{"id": "login", "name": "Log in"}]
    result = {
        "protocolVersion": 2 if mode == "v2" else 1,
        "agentCapabilities": caps,
        "authMethods": auth,
        "agentInfo": {"name": "test-agent", "version": "1.0.0"},
    }
    if meta:
        result["_meta"] = meta
    return result


def answer(request):
    method = request.get("method")
    if method == "initialize":
        if mode == "slow":
            time.sleep(1.5)
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


grandchild_pid = None


def main():
    global grandchild_pid
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
    if mode == "linger":
        linger(int(sys.argv[sys.argv.index("--report") + 1]))
    if mode == "plant":
        with open(os.path.join(os.environ["HOME"], "planted"), "w") as f:
            f.write("planted by another agent\n")
    if mode == "exit":
        sys.stderr.write("fatal: this build has no ACP mode\n")
        sys.exit(3)
    if mode in ("grandchild", "orphan", "reexec-orphan", "hold"):
        grandchild_pid = spawn_grandchild(mode not in ("grandchild", "hold"), mode == "reexec-orphan")
    if mode == "hold":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if mode == "silent" or "id" not in request or "method" not in request:
            continue
        reply = answer(request)
        reply["id"] = request["id"]
        send(reply)


# Run as a script, or imported by the console script of the wheel tests/registry/verify.rs builds.
if __name__ == "__main__":
    main()
