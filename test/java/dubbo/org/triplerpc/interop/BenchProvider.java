package org.triplerpc.interop;

import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

/**
 * A Dubbo Java provider of {@link Bench} over Triple on 127.0.0.1:{@code args[0]} (hessian2 and
 * fastjson2), for bench/dubbo-java.mjs. Prints "LISTENING <port>"; exits when its stdin closes.
 */
public final class BenchProvider {
    private BenchProvider() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        ApplicationConfig app = new ApplicationConfig("bench-provider");
        app.setQosEnable(false);
        ProtocolConfig tri = new ProtocolConfig("tri", port);
        tri.setHost("127.0.0.1");
        tri.setPreferSerialization("hessian2,fastjson2");
        ServiceConfig<Bench> s = new ServiceConfig<>();
        s.setInterface(Bench.class);
        s.setRef(a -> new Address(a.city, a.zip + 1));
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
