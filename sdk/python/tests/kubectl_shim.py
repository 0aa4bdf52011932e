"""A kubectl stand-in for `kubectl port-forward pod/<name> :<port> …` (the local test cluster's
node agent serves no port-forward): records its arguments in $SHIM_ARGS_FILE, listens on a free
127.0.0.1 port, prints kubectl's `Forwarding from …` line, and relays every connection to
$FORWARD_TO (a gateway pod's ip:port) until it is terminated."""

import json
import os
import socket
import sys
import threading


def relay(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main() -> None:
    args = sys.argv[1:]
    with open(os.environ["SHIM_ARGS_FILE"], "w") as f:
        json.dump(args, f)
    host, port = os.environ["FORWARD_TO"].rsplit(":", 1)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    remote = next(a for a in args if a.startswith(":"))[1:]
    print(f"Forwarding from 127.0.0.1:{srv.getsockname()[1]} -> {remote}", flush=True)
    while True:
        client, _ = srv.accept()
        upstream = socket.create_connection((host, int(port)))
        threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
        threading.Thread(target=relay, args=(upstream, client), daemon=True).start()


if __name__ == "__main__":
    main()
