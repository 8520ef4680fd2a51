#!/usr/bin/env bash
# Installs what `npm test` needs besides Node and the npm packages, on Debian or Ubuntu (apt, as
# root): h2load (nghttp2-client), Chromium (the browser tests), tesseract-ocr (reads back the
# screenshot of the /docs page's answer), curl, openssl, protoc
# (protobuf-compiler), ZooKeeper with its Java runtime (the registry tests run a real one) and
# kazoo (they read its nodes with it), grpcio (a real gRPC-only peer for the client's hint), and for the hessian2 tests' Java peer a JDK (javac), Caucho
# Hessian and protobuf-java, and for the Dubbo Java tests (test/java/dubbo-*) the Debian jars the
# fixture's Apache Dubbo 3.3.1 runs on (netty, javassist, log4j2, gson, snakeyaml, …; the list in
# test/fixtures/dubbo-java/README.md). Installs only what is missing. .ci/run uses it too.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
command -v h2load >/dev/null 2>&1 || need+=(nghttp2-client)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v tesseract >/dev/null 2>&1 || need+=(tesseract-ocr)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler)
dpkg -s zookeeper >/dev/null 2>&1 || need+=(zookeeper)
/usr/bin/python3 -c "import kazoo" >/dev/null 2>&1 || need+=(python3-kazoo)
/usr/bin/python3 -c "import grpc" >/dev/null 2>&1 || need+=(python3-grpcio)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
dpkg -s libhessian-java >/dev/null 2>&1 || need+=(libhessian-java)
dpkg -s libprotobuf-java >/dev/null 2>&1 || need+=(libprotobuf-java)
for p in libzookeeper-java libnetty-java libjavassist-java libslf4j-java liblog4j2-java libcommons-lang3-java \
  libcommons-io-java libcommons-logging-java libgoogle-gson-java libyaml-snake-java libcommons-compress-java libsnappy-java \
  libjaxb-api-java libguava-java libgeronimo-annotation-1.3-spec-java libhdrhistogram-java libjackson2-databind-java; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
