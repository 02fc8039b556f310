"""KEDA's external scaler protocol (``externalscaler.ExternalScaler``): the ``.proto`` written
from KEDA's message and field list, and the protobuf modules protoc generates from it
(``scripts/gen_keda_grpc.sh``, ``make grpc``; committed, never edited by hand)."""
