package org.triplerpc.interop;

import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.dubbo.common.stream.StreamObserver;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.RpcContext;

/** The Java provider's implementation; `tag` tells registrations (version, group) apart. */
public class InteropImpl implements Interop {
    private final String tag;

    public InteropImpl(String tag) {
        this.tag = tag;
    }

    @Override
    public String hello(String name) {
        return "hello " + name + " from " + tag;
    }

    @Override
    public Person echo(Person p) {
        return Samples.echoed(p);
    }

    @Override
    public String describe(Person p) {
        return Describe.of(p);
    }

    @Override
    public Person sample() {
        return Samples.person();
    }

    @Override
    public long mix(int i, long l, double d, boolean b, String s) {
        return i + l + (long) d + (b ? 1 : 0) + (s == null ? -1 : s.length());
    }

    @Override
    public Map<String, Long> index(List<Person> ps) {
        Map<String, Long> out = new TreeMap<>();
        for (Person p : ps) out.put(p.name, p.id);
        return out;
    }

    @Override
    public String fail(String kind) {
        switch (kind) {
            case "illegal":
                throw new IllegalArgumentException("bad kind: " + kind);
            case "custom":
                throw new InteropException("custom failure", 42);
            case "npe":
                throw new NullPointerException("nothing here");
            default:
                return "no failure: " + kind;
        }
    }

    @Override
    public String slow(int ms) {
        Invocation inv = RpcContext.getServiceContext().getInvocation();
        Object timeout = inv == null ? null : inv.get("timeout");
        if (ms > 0) {
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return "timeout=" + (timeout == null ? "none" : timeout);
    }

    @Override
    public String attachment(String key) {
        String v = RpcContext.getServerAttachment().getAttachment(key);
        RpcContext.getServerContext().setAttachment("x-reply", "java saw " + v);
        return String.valueOf(v);
    }

    @Override
    public String whoami() {
        return tag;
    }

    @Override
    public void count(int n, StreamObserver<String> out) {
        for (int i = 0; i < n; i++) out.onNext("#" + i);
        out.onCompleted();
    }

    @Override
    public StreamObserver<Integer> total(StreamObserver<Integer> out) {
        return new StreamObserver<Integer>() {
            private int sum;

            @Override
            public void onNext(Integer x) {
                sum += x;
            }

            @Override
            public void onError(Throwable t) {
                out.onError(t);
            }

            @Override
            public void onCompleted() {
                out.onNext(sum);
                out.onCompleted();
            }
        };
    }

    @Override
    public StreamObserver<Person> rename(StreamObserver<Person> out) {
        return new StreamObserver<Person>() {
            @Override
            public void onNext(Person p) {
                p.name = p.name + "?";
                out.onNext(p);
            }

            @Override
            public void onError(Throwable t) {
                out.onError(t);
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }

    @Override
    public JavaTypes types(JavaTypes t) {
        return t;
    }

    @Override
    public JavaTypes typesSample() {
        return TypeSamples.types();
    }

    @Override
    public String typesDescribe(JavaTypes t) {
        return TypeSamples.describe(t);
    }

    @Override
    public String params(BigDecimal d, LocalDate ld, LocalTime lt, LocalDateTime ldt, Instant i, OffsetDateTime o, ZonedDateTime z,
            Duration du, Timestamp ts, Color c, short s, byte b, char ch, float f) {
        return d + "|" + ld + "|" + lt + "|" + ldt + "|" + i + "|" + o + "|" + z + "|" + du + "|" + (ts == null ? null : ts.toInstant())
                + "|" + c + "|" + s + "|" + b + "|" + ch + "|" + f;
    }

    @Override
    public BigDecimal addDecimal(BigDecimal a, BigDecimal b) {
        return a.add(b);
    }

    @Override
    public ZonedDateTime later(ZonedDateTime z, Duration d) {
        return z.plus(d);
    }
}
