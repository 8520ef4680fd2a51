package org.triplerpc.interop;

import java.util.Map;

import com.alibaba.fastjson2.JSON;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

/**
 * The benchmark's Java load generator (bench/dubbo-java.mjs): a Dubbo consumer of {@link Bench}
 * at {@code url} (tri://host:port) with {@code serialization}, driven in a closed loop by
 * {@code concurrency} threads (one call in flight each, see LoadLoop) for {@code warmup} seconds,
 * then measured for {@code seconds}. Prints one JSON line: calls, failures, counts (ok, or wrong
 * for a wrong answer), ms, rate (calls/s).
 */
public final class LoadDriver {
    private LoadDriver() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String serialization = args[1];
        int concurrency = Integer.parseInt(args[2]);
        long seconds = Long.parseLong(args[3]);
        long warmup = Long.parseLong(args[4]);
        ApplicationConfig app = new ApplicationConfig("bench-consumer");
        app.setQosEnable(false);
        DubboBootstrap.getInstance().application(app).registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE)).start();
        ReferenceConfig<Bench> r = new ReferenceConfig<>();
        r.setInterface(Bench.class);
        r.setProtocol("tri");
        r.setRetries(0);
        r.setCheck(false);
        r.setTimeout(30000);
        r.setUrl(url + "?serialization=" + serialization + "&prefer.serialization=" + serialization);
        Bench b = r.get();
        Address a = new Address("Zürich", 8001);
        Address first = b.next(a);
        if (first.zip != 8002 || !"Zürich".equals(first.city)) throw new IllegalStateException("unexpected answer " + JSON.toJSONString(first));
        if (warmup > 0) LoadLoop.run(() -> b.next(a).zip, concurrency, warmup * 1000);
        Map<String, Object> out = LoadLoop.run(() -> b.next(a).zip == 8002 ? "ok" : "wrong", concurrency, seconds * 1000);
        long calls = (Long) out.get("calls");
        long ms = (Long) out.get("ms");
        out.put("rate", calls * 1000.0 / ms);
        System.out.println(JSON.toJSONString(out));
        System.out.flush();
        System.exit(0);
    }
}
