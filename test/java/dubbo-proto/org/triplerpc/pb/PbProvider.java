package org.triplerpc.pb;

import org.apache.dubbo.common.stream.StreamObserver;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

/**
 * A Dubbo Java provider of {@link PbGreeter} (protobuf serialization) on 127.0.0.1:{@code args[0]}.
 * hello answers "hello NAME from java", the id + 1 and the number of tags; helloStream answers
 * three such replies, "… #1" to "… #3". Prints "LISTENING <port>"; exits when stdin closes.
 */
public final class PbProvider implements PbGreeter {
    @Override
    public HelloReply hello(HelloRequest req) {
        return reply(req, "");
    }

    @Override
    public void helloStream(HelloRequest req, StreamObserver<HelloReply> out) {
        for (int i = 1; i <= 3; i++) out.onNext(reply(req, " #" + i));
        out.onCompleted();
    }

    private static HelloReply reply(HelloRequest req, String suffix) {
        return HelloReply.newBuilder()
                .setMessage("hello " + req.getName() + " from java" + suffix)
                .setId(req.getId() + 1)
                .setTags(req.getTagsCount())
                .build();
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        ApplicationConfig app = new ApplicationConfig("pb-provider");
        app.setQosEnable(false);
        ProtocolConfig tri = new ProtocolConfig("tri", port);
        tri.setHost("127.0.0.1");
        ServiceConfig<PbGreeter> s = new ServiceConfig<>();
        s.setInterface(PbGreeter.class);
        s.setRef(new PbProvider());
        DubboBootstrap boot = DubboBootstrap.getInstance()
                .application(app)
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE))
                .protocol(tri)
                .service(s);
        boot.start();
        System.out.println("LISTENING " + port);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until stdin closes
        }
        boot.stop();
        System.exit(0);
    }
}
