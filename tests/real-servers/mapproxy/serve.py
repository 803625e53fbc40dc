#!/usr/bin/env python3
"""Serve one MapProxy configuration on 127.0.0.1, for the real-server tests.

    .venv-mapproxy/bin/python tests/real-servers/mapproxy/serve.py CONFIG.yaml [--port 0]

Prints `MAPPROXY_URL=http://127.0.0.1:<port>` on stdout once the socket listens (port 0 = any
free port), then serves until SIGTERM or SIGINT. One process, no reloader (so the pid the test
holds is the server), one thread per request (so the tests' parallel fetches do not queue behind
each other), and no access log (the front proxy counts requests; stderr keeps only errors).
"""

import argparse
import logging
import signal
import socketserver
import sys
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    # Request threads must not keep the process alive after SIGTERM.
    daemon_threads = True
    # socketserver's default listen backlog is 5: a burst of parallel fetches beyond that has
    # its SYNs dropped and retried by the kernel a second later, which looks like a slow server.
    request_queue_size = 128


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="mapproxy.yaml (relative paths in it resolve beside it)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    # MapProxy logs every source request and config note at INFO; the tests only want errors.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    from mapproxy.wsgiapp import make_wsgi_app

    app = make_wsgi_app(args.config, reloader=False)

    server = ThreadingWSGIServer(("127.0.0.1", args.port), QuietHandler)
    server.set_app(app)

    # SystemExit raised in the main thread breaks serve_forever() out of its select loop;
    # calling server.shutdown() from the handler instead would deadlock (it waits for that loop).
    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    print(f"MAPPROXY_URL=http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
