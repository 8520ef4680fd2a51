package org.triplerpc.interop;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

/**
 * A Dubbo Java provider of {@link Interop} over Triple, for the tests. Arguments are key=value:
 * port (required), registry (default N/A: direct calls only), app (default java-provider),
 * mode (register-mode: all, interface or instance), tag (what whoami answers from the registration
 * without version and group, default "default": the cluster tests tell providers apart). Exports three registrations: no version and
 * no group ("default"), version 2.0.0 ("v2"), group blue ("blue"). Accepts hessian2 and
 * fastjson2. Prints "LISTENING <port>" once exported; exits when its stdin closes.
 */
public final class JavaProvider {
    private JavaProvider() {}

    public static void main(String[] args) throws IOException {
        Map<String, String> opts = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            opts.put(a.substring(0, eq), a.substring(eq + 1));
        }
        int port = Integer.parseInt(opts.get("port"));
        ApplicationConfig app = new ApplicationConfig(opts.getOrDefault("app", "java-provider"));
        app.setQosEnable(false);
        if (opts.containsKey("mode")) app.setRegisterMode(opts.get("mode"));
        ProtocolConfig tri = new ProtocolConfig("tri", port);
        tri.setHost("127.0.0.1");
        tri.setPreferSerialization("hessian2,fastjson2");
        DubboBootstrap boot = DubboBootstrap.getInstance()
                .application(app)
                .registry(new RegistryConfig(opts.getOrDefault("registry", RegistryConfig.NO_AVAILABLE)))
                .protocol(tri);
        boot.service(service(opts.getOrDefault("tag", "default"), null, null));
        boot.service(service("v2", "2.0.0", null));
        boot.service(service("blue", null, "blue"));
        boot.start();
        System.out.println("LISTENING " + port);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the test closes stdin
        }
        boot.stop();
        System.exit(0);
    }

    private static ServiceConfig<Interop> service(String tag, String version, String group) {
        ServiceConfig<Interop> s = new ServiceConfig<>();
        s.setInterface(Interop.class);
        s.setRef(new InteropImpl(tag));
        if (version != null) s.setVersion(version);
        if (group != null) s.setGroup(group);
        return s;
    }
}
