#!/usr/bin/env bash
# Test-only TLS material for variant-sql/tests/cluster_processes.rs (workers_admit_only_their_coordinator) (never for real use: the keys are public):
# a CA and a worker certificate it signed for localhost and 127.0.0.1, valid for 100 years, and
# a second CA that signed nothing here (a coordinator that trusts it must refuse the worker).
#   tests/data/tls/make.sh   (run from anywhere; needs openssl)
set -euo pipefail
cd "$(dirname "$0")"
days=36500
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
    -subj "/CN=variant-sql test CA" -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
    -subj "/CN=another test CA" -keyout other-ca.key -out other-ca.pem 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=localhost" -keyout worker.key -out worker.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' > worker.ext
openssl x509 -req -in worker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days "$days" \
    -extfile worker.ext -out worker.pem 2>/dev/null
rm -f worker.csr worker.ext ca.srl ca.key other-ca.key
