package org.triplerpc.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import org.apache.dubbo.common.stream.StreamObserver;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.RpcContext;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.StatusRpcException;

/**
 * A Dubbo Java consumer of {@link Interop} driven by the test: one JSON command a line on stdin,
 * one JSON answer a line on stdout, `{"id", "ok": result}` or `{"id", "error": {class, message,
 * code, status, causes}}`, with the call's duration in "ms". Commands run concurrently.
 *
 * A command: id, op (hello, echo, sample, describe, mix, index, fail, slow, attachment, whoami,
 * count, total, rename, types, typesSample, typesDescribe, params, addDecimal with a and b, later with z and d,
 * load: a closed loop of whoami calls, see LoadLoop), the op's arguments, and where to call: url (a direct tri:// address) or
 * registry (a zookeeper:// address, with migration: the reference's discovery level),
 * serialization (hessian2 or fastjson2), version, group, timeout (ms, default 15000), retries
 * (failover's, default 0). References
 * are made once per distinct target and kept.
 * Arguments: the application name (default java-consumer), the application's registry (default
 * N/A). Prints "READY" once started; exits when its stdin closes.
 */
public final class JavaConsumer {
    private static final Map<String, Interop> REFS = new ConcurrentHashMap<>();

    private JavaConsumer() {}

    public static void main(String[] args) throws Exception {
        ApplicationConfig app = new ApplicationConfig(args.length > 0 ? args[0] : "java-consumer");
        app.setQosEnable(false);
        // The application's registry is also where Dubbo reads the interface-application mapping
        // (its metadata center): application-level discovery needs it here, not only on a reference.
        String registry = args.length > 1 ? args[1] : RegistryConfig.NO_AVAILABLE;
        DubboBootstrap.getInstance().application(app).registry(new RegistryConfig(registry)).start();
        System.out.println("READY");
        System.out.flush();
        ExecutorService pool = Executors.newCachedThreadPool();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.trim().isEmpty()) continue;
            JSONObject cmd = JSON.parseObject(line);
            pool.submit(() -> answer(cmd));
        }
        pool.shutdownNow();
        System.exit(0);
    }

    private static void answer(JSONObject cmd) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", cmd.get("id"));
        long start = System.nanoTime();
        try {
            Object ok = run(cmd);
            out.put("ok", ok);
        } catch (Throwable t) {
            out.put("error", error(t));
        }
        out.put("ms", (System.nanoTime() - start) / 1_000_000);
        String text = JSON.toJSONString(out);
        synchronized (System.out) {
            System.out.println(text);
            System.out.flush();
        }
    }

    /**
     * An exception as the test reads it: its class, message and Dubbo code, and the gRPC status
     * of the StatusRpcException in its cause chain (what Dubbo's Triple client read from the
     * answer), with that exception's own Dubbo code.
     */
    private static Map<String, Object> error(Throwable t) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("class", t.getClass().getName());
        e.put("message", t.getMessage());
        if (t instanceof RpcException) e.put("code", ((RpcException) t).getCode());
        List<String> causes = new ArrayList<>();
        for (Throwable c = t; c != null && causes.size() < 6; c = c.getCause()) {
            if (c != t) causes.add(c.getClass().getName() + ": " + c.getMessage());
            if (c instanceof StatusRpcException && !e.containsKey("status")) {
                StatusRpcException s = (StatusRpcException) c;
                e.put("status", s.getStatus().code.name());
                e.put("statusCode", s.getCode());
                e.put("description", s.getStatus().description);
            }
        }
        e.put("causes", causes);
        return e;
    }

    private static Interop ref(JSONObject cmd) {
        String serialization = cmd.getString("serialization");
        String key = String.join("|", String.valueOf(cmd.get("url")), String.valueOf(cmd.get("registry")), serialization,
                String.valueOf(cmd.get("version")), String.valueOf(cmd.get("group")), String.valueOf(cmd.get("timeout")),
                String.valueOf(cmd.get("migration")), String.valueOf(cmd.get("retries")));
        return REFS.computeIfAbsent(key, k -> {
            ReferenceConfig<Interop> r = new ReferenceConfig<>();
            r.setInterface(Interop.class);
            r.setProtocol("tri");
            // Failover's retries: none unless the command asks (the cluster tests count on Java's failover).
            r.setRetries(cmd.containsKey("retries") ? cmd.getInteger("retries") : 0);
            r.setCheck(false);
            r.setTimeout(cmd.containsKey("timeout") ? cmd.getInteger("timeout") : 15000);
            Map<String, String> params = new LinkedHashMap<>();
            if (serialization != null) {
                params.put("serialization", serialization);
                params.put("prefer.serialization", serialization);
            }
            // The discovery level of this reference (Dubbo's migration step): APPLICATION_FIRST,
            // FORCE_APPLICATION or FORCE_INTERFACE.
            if (cmd.containsKey("migration")) params.put("migration.step", cmd.getString("migration"));
            r.setParameters(params);
            String query = serialization == null ? "" : "?serialization=" + serialization + "&prefer.serialization=" + serialization;
            if (cmd.containsKey("url")) r.setUrl(cmd.getString("url") + query);
            if (cmd.containsKey("registry")) r.setRegistry(new RegistryConfig(cmd.getString("registry")));
            if (cmd.containsKey("version")) r.setVersion(cmd.getString("version"));
            if (cmd.containsKey("group")) r.setGroup(cmd.getString("group"));
            return r.get();
        });
    }

    private static Object run(JSONObject cmd) throws Throwable {
        Interop s = ref(cmd);
        // Dubbo's routing tag of this call (a command's "tag"), as an attachment the tag router reads.
        if (cmd.containsKey("tag")) RpcContext.getClientAttachment().setAttachment("dubbo.tag", cmd.getString("tag"));
        else RpcContext.getClientAttachment().removeAttachment("dubbo.tag");
        switch (cmd.getString("op")) {
            case "hello":
                return s.hello(cmd.getString("name"));
            case "echo":
                return Describe.of(s.echo(Samples.person()));
            case "sample":
                return Describe.of(s.sample());
            case "describe":
                return s.describe(Samples.person());
            case "mix":
                return String.valueOf(s.mix(cmd.getIntValue("i"), cmd.getLongValue("l"), cmd.getDoubleValue("d"),
                        cmd.getBooleanValue("b"), cmd.getString("s")));
            case "index":
                Person p = Samples.person();
                return Describe.of(s.index(Arrays.asList(p, p.friend)));
            case "fail":
                return s.fail(cmd.getString("kind"));
            case "slow":
                return s.slow(cmd.getIntValue("ms"));
            case "attachment":
                return attachment(s, cmd.getString("key"), cmd.getString("value"));
            case "whoami":
                return s.whoami();
            case "load":
                // A closed loop of whoami (or hello) calls: concurrency lanes for ms; see LoadLoop.
                return LoadLoop.run(() -> "hello".equals(cmd.getString("call")) ? s.hello("load") : s.whoami(),
                        cmd.getIntValue("concurrency", 4), cmd.getLongValue("ms", 1000));
            case "types":
                return TypeSamples.describe(s.types(TypeSamples.types()));
            case "typesSample":
                return TypeSamples.describe(s.typesSample());
            case "typesDescribe":
                return s.typesDescribe(TypeSamples.types());
            case "params":
                return params(s);
            case "addDecimal":
                return String.valueOf(s.addDecimal(new java.math.BigDecimal(cmd.getString("a")), new java.math.BigDecimal(cmd.getString("b"))));
            case "later":
                return String.valueOf(s.later(java.time.ZonedDateTime.parse(cmd.getString("z")), java.time.Duration.parse(cmd.getString("d"))));
            case "count":
                return JavaConsumer.<String>streamed(out -> s.count(cmd.getIntValue("n"), out));
            case "total":
                return JavaConsumer.<Integer>streamed(out -> send(s.total(out), cmd.getJSONArray("xs").toJavaList(Integer.class)));
            case "rename":
                return JavaConsumer.<Person>streamed(out -> send(s.rename(out), Arrays.asList(Samples.person(), Samples.person().friend)));
            default:
                throw new IllegalArgumentException("unknown op " + cmd.getString("op"));
        }
    }

    /** params() with TypeSamples' values. */
    private static String params(Interop s) {
        JavaTypes t = TypeSamples.types();
        return s.params(t.dec, t.date, t.time, t.dateTime, t.instant, t.offsetDateTime, t.zoned, t.duration, t.timestamp, t.color, t.s, t.b, t.c, 1.5f);
    }

    private static Map<String, Object> attachment(Interop s, String key, String value) {
        RpcContext.getClientAttachment().setAttachment(key, value);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("result", s.attachment(key));
        r.put("reply", RpcContext.getServerContext().getAttachment("x-reply"));
        return r;
    }

    private static <T> void send(StreamObserver<T> requests, List<T> xs) {
        for (T x : xs) requests.onNext(x);
        requests.onCompleted();
    }

    private interface Call<R> {
        void start(StreamObserver<R> out);
    }

    /** Runs a streaming call; its messages (persons described) once it completes, or its error thrown. */
    private static <R> List<Object> streamed(Call<R> call) throws Throwable {
        List<Object> got = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<List<Object>> done = new CompletableFuture<>();
        call.start(new StreamObserver<R>() {
            @Override
            public void onNext(R v) {
                got.add(v instanceof Person ? Describe.of(v) : v);
            }

            @Override
            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                done.complete(got);
            }
        });
        try {
            return done.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause();
        }
    }
}
