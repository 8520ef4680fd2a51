package org.triplerpc.pb;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.dubbo.common.stream.StreamObserver;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

/**
 * A Dubbo Java consumer of {@link PbGreeter} at {@code args[0]} (tri://host:port): calls hello
 * and helloStream once each with name {@code args[1]}, id Long.MIN_VALUE + 1 and two tags, and
 * prints one line per reply, "message|id|tags", then "DONE"; or "ERROR class: message".
 */
public final class PbConsumer {
    private PbConsumer() {}

    public static void main(String[] args) throws Exception {
        ApplicationConfig app = new ApplicationConfig("pb-consumer");
        app.setQosEnable(false);
        DubboBootstrap.getInstance().application(app).registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE)).start();
        ReferenceConfig<PbGreeter> r = new ReferenceConfig<>();
        r.setInterface(PbGreeter.class);
        r.setProtocol("tri");
        r.setRetries(0);
        r.setCheck(false);
        r.setTimeout(10000);
        r.setUrl(args[0]);
        PbGreeter g = r.get();
        HelloRequest req = HelloRequest.newBuilder().setName(args[1]).setId(Long.MIN_VALUE + 1).addTags("a").addTags("é").build();
        try {
            print(g.hello(req));
            List<HelloReply> got = new ArrayList<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            g.helloStream(req, new StreamObserver<HelloReply>() {
                @Override
                public void onNext(HelloReply v) {
                    got.add(v);
                }

                @Override
                public void onError(Throwable t) {
                    done.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                    done.complete(null);
                }
            });
            done.get(10, TimeUnit.SECONDS);
            for (HelloReply v : got) print(v);
            System.out.println("DONE");
        } catch (Throwable t) {
            Throwable c = t instanceof java.util.concurrent.ExecutionException ? t.getCause() : t;
            System.out.println("ERROR " + c.getClass().getName() + ": " + c.getMessage());
        }
        System.out.flush();
        System.exit(0);
    }

    private static void print(HelloReply v) {
        System.out.println(v.getMessage() + "|" + v.getId() + "|" + v.getTags());
    }
}
