"""Runs INSIDE the sandbox with the system python3 (standard library only).

Listens on 127.0.0.1:PORT in the sandbox's loopback-only network and forwards each
connection to the harness's egress proxy through the mounted unix socket. It returns as
soon as it listens (the listener continues in a forked child), so a wrapper can run
``python3 bridge.py SOCK PORT && exec agent ...``.
"""

import os
import socket
import sys
import threading


def pipe(src, dst, counter=None):
    """Copy ``src`` to ``dst`` until EOF, then half-close ``dst``; ``counter[0]`` adds up the bytes.

    The harness's egress proxy uses this too (this file must stay standard-library only).
    """
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if counter is not None:
                counter[0] += len(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(listener, sock_path):
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(sock_path)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()


def main():
    sock_path, port = sys.argv[1], int(sys.argv[2])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    _serve(listener, sock_path)


if __name__ == "__main__":
    main()
