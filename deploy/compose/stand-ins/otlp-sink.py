"""OTLP/gRPC receiver of the compose stand-ins: accepts every export (trace, metric, log),
answers with the empty success response, and prints a count every few seconds."""
import sys
import threading
import time
from concurrent import futures

import grpc

counts = {}
lock = threading.Lock()


def exporter(method):
    def export(request, context):
        with lock:
            n, size = counts.get(method, (0, 0))
            counts[method] = (n + 1, size + len(request))
        return b""  # an empty Export*ServiceResponse: nothing rejected

    return export


class Sink(grpc.GenericRpcHandler):
    def service(self, details):
        return grpc.unary_unary_rpc_method_handler(exporter(details.method))


def report():
    last = None
    while True:
        time.sleep(5)
        with lock:
            now = dict(counts)
        if now != last:
            for method, (n, size) in sorted(now.items()):
                print(f"otlp-sink: {n} exports ({size} bytes) on {method}", flush=True)
            last = now


if __name__ == "__main__":
    # Collector flags (--config=...) are accepted and ignored.
    print(f"otlp-sink: stand-in for the OpenTelemetry collector, args {sys.argv[1:]}", flush=True)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((Sink(),))
    server.add_insecure_port("0.0.0.0:4317")
    server.start()
    threading.Thread(target=report, daemon=True).start()
    server.wait_for_termination()
