"""A Herald client in Python, generated from proto/ by `buf generate --template buf.gen.python.yaml`.

Used by test/api/python-client.test.ts and shown in docs/clients.md. It publishes over gRPC, has a
bad request refused and reads the refusal's details (google.rpc.ErrorInfo and BadRequest from the
`grpc-status-details-bin` trailer), and asks grpc.health.v1 whether the server serves.

    PYTHONPATH=gen-python python3 test/python/notify_client.py 127.0.0.1:8080 "$HERALD_API_KEY"

Prints one JSON object.
"""

import json
import sys

import grpc
from google.rpc import error_details_pb2, status_pb2
from herald.v1 import notify_service_pb2, notify_service_pb2_grpc


def details_of(err: grpc.RpcError) -> dict:
    """The refusal's code, message and rich details, as a caller would read them."""
    out = {"code": err.code().name, "message": err.details()}
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for any_detail in status.details:
            info = error_details_pb2.ErrorInfo()
            bad = error_details_pb2.BadRequest()
            if any_detail.Unpack(info):
                out["reason"] = info.reason
                out["domain"] = info.domain
            elif any_detail.Unpack(bad):
                out["fields"] = [v.field for v in bad.field_violations]
                out["descriptions"] = [v.description for v in bad.field_violations]
    return out


def main(target: str, api_key: str) -> None:
    auth = (("authorization", f"Bearer {api_key}"),)
    result = {}
    with grpc.insecure_channel(target) as channel:
        notify = notify_service_pb2_grpc.NotifyServiceStub(channel)
        request = notify_service_pb2.NotifyRequest(title="From Python", message="generated client")
        request.metadata.update({"build": 42})
        reply = notify.Notify(request, metadata=auth, timeout=10)
        result["notification"] = {
            "id": reply.notification.id,
            "title": reply.notification.title,
        }
        try:
            notify.Notify(notify_service_pb2.NotifyRequest(title="x", topic="Not A Topic"),
                          metadata=auth, timeout=10)
            result["refused"] = None
        except grpc.RpcError as err:
            result["refused"] = details_of(err)
        try:
            notify.Notify(notify_service_pb2.NotifyRequest(title="x"), timeout=10)
        except grpc.RpcError as err:
            result["unauthenticated"] = details_of(err)
        # grpc.health.v1.Health/Check, hand-built (its generated module would shadow grpcio's
        # own `grpc` package): an empty HealthCheckRequest is no bytes; SERVING is field 1 = 1.
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda _: b"",
            response_deserializer=lambda raw: raw,
        )
        answer = check(None, timeout=10)
        result["health"] = {b"\x08\x01": "SERVING", b"\x08\x02": "NOT_SERVING"}.get(
            answer, answer.hex()
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
