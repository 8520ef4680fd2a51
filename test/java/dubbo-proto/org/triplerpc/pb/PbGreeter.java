package org.triplerpc.pb;

import org.apache.dubbo.common.stream.StreamObserver;

/**
 * pbgreet.proto's PbGreeter as a plain Java interface: Dubbo 3.3 sees protobuf message classes
 * (ProtobufUtils.isProtobufClass) and sends them bare, as gRPC does, without its wrapper.
 */
public interface PbGreeter {
    HelloReply hello(HelloRequest req);

    void helloStream(HelloRequest req, StreamObserver<HelloReply> out);
}
